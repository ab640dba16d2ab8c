/* tests/unit/check_json.c: not written yet; fails until it is. */
int main(void) { return 1; }
