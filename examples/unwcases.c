/*
 * unwcases: the cases an unwinder must get right, one per mode, each with
 * a known call chain (tests/e2e/28_unwind_cases.sh):
 *
 *   qsort    main -> sort_rounds -> qsort (libc) -> libc's merge sort
 *            -> cmp_slow -> spin: a callback through libc, whose internal
 *            frames have no frame pointer
 *   signal   main -> signal_target, spinning; a SIGPROF timer fires every
 *            millisecond and its handler on_prof spins too:
 *            main -> signal_target -> __restore_rt (libc's signal return)
 *            -> on_prof -> spin
 *   vdso     main -> vdso_loop -> clock_gettime (libc) -> the vDSO's
 *   plt      main -> plt_loop -> the PLT stub of strlen -> strlen (libc):
 *            samples land in the stub itself, whose page is dropped
 *            before each call, so that fetching it faults
 *
 * Usage: unwcases MODE [SECONDS]   (default 6)
 *
 * As in the other examples, inlining, cloning and sibling calls are
 * defeated so that every function named above is a frame of its own.
 */
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

static volatile sig_atomic_t stop;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Spins n rounds of a multiply chain: the CPU time of the qsort and signal
 * modes. A frame of its own (not inlined), so that a profiler that shows
 * inlined functions and one that does not name the same leaf.
 */
NOCLEVER unsigned long spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* --- qsort: a callback through libc --------------------------------------- */

NOCLEVER int cmp_slow(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	sink += spin(200, (unsigned long)x);
	return x < y ? -1 : x > y;
}

NOCLEVER void sort_rounds(double end)
{
	long v[512];

	while (now() < end) {
		for (int i = 0; i < 512; i++)
			v[i] = (long)((unsigned long)i * 2654435761UL % 1000);
		qsort(v, 512, sizeof(v[0]), cmp_slow);
		__asm__ volatile("" : : "r"(v) : "memory");
	}
}

/* --- signal: a handler, and the function it interrupted ------------------- */

/* Most of the CPU time: the timer fires every ms of CPU, the handler spins ~0.7 ms. */
NOCLEVER void on_prof(int sig)
{
	(void)sig;
	sink += spin(700000, 7);
}

NOCLEVER void signal_target(double end)
{
	unsigned long x = 3;

	/* Its own loop, not spin(): a sample in spin() is then the handler's. */
	while (now() < end) {
		for (unsigned long i = 0; i < 100000; i++) {
			x = x * 2862933555777941757UL + i;
			__asm__ volatile("" : "+r"(x));
		}
	}
	sink += x;
}

static void run_signal(double end)
{
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	sa.sa_handler = on_prof;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	signal_target(end);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
}

/* --- vdso: clock_gettime in a loop ----------------------------------------- */

NOCLEVER void vdso_loop(double end)
{
	struct timespec ts;
	unsigned long n = 0;

	do {
		for (int i = 0; i < 1000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			n += (unsigned long)ts.tv_nsec;
		}
	} while (now() < end);
	sink += n;
}

/* --- plt: calls through the procedure linkage table ------------------------ */

static const char *volatile word = "x";

/* The linker's symbols: the start of .got.plt, the dynamic section, the text. */
extern char _GLOBAL_OFFSET_TABLE_[];
extern ElfW(Dyn) _DYNAMIC[];
extern char __executable_start[], etext[];

/*
 * The PLT's code, [*lo, *hi): from the .got.plt slots not bound yet, which
 * hold the address of their stub's second instruction (lazy binding).
 */
static void plt_bounds(uintptr_t *lo, uintptr_t *hi)
{
	const uintptr_t *got = (const uintptr_t *)_GLOBAL_OFFSET_TABLE_;
	size_t slots = 0;

	for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_PLTRELSZ)
			slots = d->d_un.d_val / sizeof(ElfW(Rela));
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (size_t i = 3; i < 3 + slots; i++) {
		if (got[i] < (uintptr_t)__executable_start || got[i] >= (uintptr_t)etext)
			continue; /* bound: libc's address */
		if (got[i] - 6 < *lo)
			*lo = got[i] - 6;
		if (got[i] + 10 > *hi)
			*hi = got[i] + 10;
	}
}

/*
 * Each call goes through strlen's PLT stub with the stub's page dropped
 * from the process's page tables just before (MADV_DONTNEED: the page
 * stays in the page cache), so that fetching the stub's first instruction
 * faults, and the samples taken while the kernel maps the page again have
 * the stub as their user pc. plt_loop starts a page of its own, past the
 * PLT, so that nothing else it runs faults. Flushing the stub's code from
 * the cache instead drew a sample in the stub a few times a minute on one
 * host (2 Dec 2026), and none in 50,000 samples on another (6 Dec).
 */
__attribute__((aligned(4096))) NOCLEVER void plt_loop(double end)
{
	unsigned long n = 0;
	uintptr_t lo, hi, page;

	plt_bounds(&lo, &hi);
	page = lo & ~(uintptr_t)4095;
	if (lo >= hi || (hi - 1) / 4096 != lo / 4096 || (uintptr_t)plt_loop / 4096 == lo / 4096) {
		fprintf(stderr,
			"unwcases: no lazy PLT slot, or the PLT [%#lx, %#lx) is not on "
			"a page apart from plt_loop\n",
			(unsigned long)lo, (unsigned long)hi);
		exit(1);
	}
	do {
		for (int i = 0; i < 1000; i++) {
			if (madvise((void *)page, 4096, MADV_DONTNEED)) {
				perror("unwcases: madvise");
				exit(1);
			}
			n += strlen(word);
		}
	} while (now() < end);
	sink += n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double end = now() + (argc > 2 ? atof(argv[2]) : 6.0);

	if (!strcmp(mode, "qsort"))
		sort_rounds(end);
	else if (!strcmp(mode, "signal"))
		run_signal(end);
	else if (!strcmp(mode, "vdso"))
		vdso_loop(end);
	else if (!strcmp(mode, "plt"))
		plt_loop(end);
	else {
		fprintf(stderr, "usage: unwcases qsort|signal|vdso|plt [SECONDS]\n");
		return 2;
	}
	printf("%lu\n", sink & 1);
	return 0;
}
