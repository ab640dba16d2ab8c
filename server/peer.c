/* server/peer.c: not written yet. */
