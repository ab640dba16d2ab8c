/*
 * sdnotify.c: systemd's readiness protocol (sd_notify(3)) without
 * libsystemd, for the Type=notify unit: heurekad says READY=1 once the
 * start-up sync is done and STOPPING=1 when it shuts down.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sdnotify.h"

/*
 * sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET (a path,
 * or an abstract name when it starts with '@').
 */
void
sdnotify_send(const char *state)
{
	struct sockaddr_un	 sun;
	const char		*path;
	size_t			 len;
	socklen_t		 slen;
	int			 fd;

	if (state == NULL || (path = getenv("NOTIFY_SOCKET")) == NULL)
		return;
	len = strlen(path);
	if (len == 0 || len >= sizeof sun.sun_path ||
	    (path[0] != '/' && path[0] != '@'))
		return;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, len);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	slen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	if (path[0] == '/')
		slen++;			/* include the NUL */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		log_warn("%s: socket", __func__);
		return;
	}
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, slen) == -1)
		log_warn("%s: sendto %s", __func__, path);
	close(fd);
}
