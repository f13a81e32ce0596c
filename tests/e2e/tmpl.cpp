// The C++ fixture of the 42_names_*cpp* tests: a template function burns
// the CPU for argv[1] seconds (default 5).
#include <cstdio>
#include <cstdlib>
#include <ctime>

template <typename T> __attribute__((noinline)) T burn_template(T n)
{
	T x = 1;
	for (T i = 0; i < n; i++) {
		x = x * 31 + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(int argc, char **argv)
{
	time_t end = time(nullptr) + (argc > 1 ? atoi(argv[1]) : 5);
	unsigned long sink = 0;

	while (time(nullptr) < end)
		sink += burn_template<unsigned long>(1000000UL);
	printf("%lu\n", sink & 1);
	return 0;
}
