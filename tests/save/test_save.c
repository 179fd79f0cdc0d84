/* test_save.c — being written; skipped until then. */
#include <stdio.h>
int main(void)
{
	puts("1..0 # SKIP save tests not written yet");
	return 0;
}
