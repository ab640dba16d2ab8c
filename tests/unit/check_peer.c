/* tests/unit/check_peer.c: not written yet; fails until it is. */
int main(void) { return 1; }
