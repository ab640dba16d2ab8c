/* tests/unit/check_registry.c: not written yet; fails until it is. */
int main(void) { return 1; }
