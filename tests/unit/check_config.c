/* tests/unit/check_config.c: not written yet; fails until it is. */
int main(void) { return 1; }
