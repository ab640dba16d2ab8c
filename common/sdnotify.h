/*
 * sdnotify.h: tell systemd of a state change (sd_notify(3) without
 * libsystemd). A no-op unless $NOTIFY_SOCKET names a socket.
 */
#ifndef SDNOTIFY_H
#define SDNOTIFY_H

/* Send `state` ("READY=1", "STOPPING=1") to $NOTIFY_SOCKET, if set. */
void	sdnotify_send(const char *state);

#endif
