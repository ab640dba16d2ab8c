/* server/main.c: not written yet. */
int main(void) { return 1; }
