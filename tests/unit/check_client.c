/* tests/unit/check_client.c: not written yet; fails until it is. */
int main(void) { return 1; }
