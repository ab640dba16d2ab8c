/* tests/unit/check_instance.c: not written yet; fails until it is. */
int main(void) { return 1; }
