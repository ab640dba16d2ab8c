/* client/examples/hello.c: not written yet. */
int main(void) { return 1; }
