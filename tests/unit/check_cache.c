/* tests/unit/check_cache.c: not written yet; fails until it is. */
int main(void) { return 1; }
