/* tests/unit/check_xml.c: not written yet; fails until it is. */
int main(void) { return 1; }
