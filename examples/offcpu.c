/*
 * offcpu: workloads that wait in known ways, for the off-CPU and wall
 * tests, each printing what the kernel or the clock says it waited.
 *
 *   offcpu sleep N MS        one thread sleeps MS ms N times in
 *                            offcpu_sleep_known(); prints the wall time
 *   offcpu early N MS        the same, without the settling sleep below:
 *                            its first waits come before its tables load
 *   offcpu spin THREADS S    THREADS threads pinned to CPU 0 spin S
 *                            seconds of wall time each; prints the sum of
 *                            their run_delay (/proc/thread-self/schedstat,
 *                            runnable but waiting, ns), read as each ends
 *   offcpu dio FILE N        N O_DIRECT reads of 4 KiB at spread offsets
 *                            of FILE (made by the caller, 64 MiB or more)
 *   offcpu migrate N MS      sleeps MS ms N times, pinned alternately to
 *                            CPU 0 and CPU 1 before each; prints wall ns
 *   offcpu mixed S           three threads for S seconds of wall time
 *                            each, running and sleeping in different
 *                            shares, each in a function of its own
 *                            (offcpu_mixed_a, _b, _c), and short threads
 *                            (offcpu_mixed_d) made one after another on
 *                            CPU 0 behind two spinning loaders; prints
 *                            each one's lifetime in ns from just before
 *                            its creation, and the sum of the short ones',
 *                            and the thread ids of a, b, c and the loaders
 *   offcpu pingpong S        this process and a child it forks hand a byte
 *                            back and forth through two pipes on CPU 0 for
 *                            S seconds, in offcpu_pingpong_loop(), which
 *                            keeps six counters live across its read() and
 *                            write() calls: built without frame pointers,
 *                            one of them is in rbp at each wait; prints
 *                            round_trips (each process waits once a trip)
 *
 * Each but early first sleeps 1 s in offcpu_settle(): the profiler sees the
 * process at its first wait and loads its unwind tables meanwhile, so
 * that the measured part is walked by them from its first wait on.
 * Times are printed as "name value" lines on stdout.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

NOCLEVER void offcpu_sleep_known(unsigned int ms)
{
	sleep_ms(ms);
}

static int do_sleep(int n, unsigned int ms)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++)
		offcpu_sleep_known(ms);
	printf("wall_ns %llu\n", (unsigned long long)(now_ns() - t0));
	return 0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static volatile uint64_t sink;

NOCLEVER void offcpu_burn_until(uint64_t end)
{
	uint64_t x = 13;

	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + (uint64_t)i;
	}
	sink = x;
}

static uint64_t run_delay_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

struct spinner {
	pthread_t thread;
	uint64_t seconds;
	uint64_t run_delay;
};

NOCLEVER void *offcpu_spinner(void *arg)
{
	struct spinner *s = arg;

	pin(0);
	offcpu_burn_until(now_ns() + s->seconds * 1000000000ull);
	s->run_delay = run_delay_ns();
	return NULL;
}

static int do_spin(int threads, unsigned int seconds)
{
	struct spinner *s = calloc((size_t)threads, sizeof(*s));
	uint64_t sum = 0;

	if (!s)
		return 1;
	for (int i = 0; i < threads; i++) {
		s[i].seconds = seconds;
		if (pthread_create(&s[i].thread, NULL, offcpu_spinner, &s[i])) {
			perror("offcpu: pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(s[i].thread, NULL);
		sum += s[i].run_delay;
	}
	printf("run_delay_ns %llu\n", (unsigned long long)sum);
	free(s);
	return 0;
}

NOCLEVER int offcpu_direct_read(int fd, void *buf, off_t at)
{
	return pread(fd, buf, 4096, at) == 4096 ? 0 : -1;
}

static int do_dio(const char *path, int n)
{
	int fd = open(path, O_RDONLY | O_DIRECT);
	off_t size;
	void *buf;

	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(path);
		return 1;
	}
	size = lseek(fd, 0, SEEK_END) / 4096;
	for (int i = 0; i < n; i++) {
		/* A stride prime to the size: every read a new block. */
		if (offcpu_direct_read(fd, buf, (off_t)((i * 7919ull) % (uint64_t)size) * 4096)) {
			perror("pread");
			return 1;
		}
	}
	close(fd);
	return 0;
}

NOCLEVER void offcpu_sleep_migrating(int i, unsigned int ms)
{
	pin(i & 1);
	sleep_ms(ms);
}

static int do_migrate(int n, unsigned int ms)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++)
		offcpu_sleep_migrating(i, ms);
	printf("wall_ns %llu\n", (unsigned long long)(now_ns() - t0));
	return 0;
}

/*
 * A thread of the mixed workload: run_ms on the CPU, then sleep_ms, until
 * its lifetime is up (rounds times, if rounds is set). Its lifetime runs
 * from just before its creation (born, the creator's clock) to its end.
 * Round i sleeps i calls of offcpu_round deep (up to MIXED_DEPTHS - 1), so
 * that each sleep has a stack of its own and a test can tell that none was
 * lost whole (cycles: the rounds it made).
 */
#define MIXED_DEPTHS 100
struct mixed {
	pthread_t thread;
	uint64_t seconds;
	unsigned int run_ms, sleep_ms, rounds;
	uint64_t born, lifetime, cycles;
	uint64_t ran_ns, waited_ns; /* the kernel's count at its end: on a CPU, runnable */
	pid_t tid;
};

/* The kernel's own count of this thread's time on a CPU and waiting for one (schedstat). */
static void thread_schedstat(uint64_t *ran_ns, uint64_t *waited_ns)
{
	unsigned long long ran = 0, waited = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &ran, &waited) != 2)
			ran = waited = 0;
		fclose(f);
	}
	*ran_ns = ran;
	*waited_ns = waited;
}

/* Sleeps ms, depth frames of itself below its caller. */
NOCLEVER void offcpu_round(unsigned int depth, unsigned int ms)
{
	if (depth)
		offcpu_round(depth - 1, ms);
	else
		sleep_ms(ms);
	__asm__ volatile("" ::: "memory"); /* not a tail call: each frame stays */
}

static void mixed_body(struct mixed *m)
{
	uint64_t end = now_ns() + m->seconds * 1000000000ull;

	m->tid = gettid();
	for (unsigned int i = 0; m->rounds ? i < m->rounds : now_ns() < end; i++) {
		offcpu_burn_until(now_ns() + m->run_ms * 1000000ull);
		offcpu_round(i % MIXED_DEPTHS, m->sleep_ms);
		m->cycles++;
	}
	thread_schedstat(&m->ran_ns, &m->waited_ns);
	m->lifetime = now_ns() - m->born;
}

NOCLEVER void *offcpu_mixed_a(void *arg)
{
	mixed_body(arg);
	return NULL;
}

NOCLEVER void *offcpu_mixed_b(void *arg)
{
	mixed_body(arg);
	return NULL;
}

NOCLEVER void *offcpu_mixed_c(void *arg)
{
	mixed_body(arg);
	return NULL;
}

NOCLEVER void *offcpu_mixed_d(void *arg)
{
	mixed_body(arg);
	return NULL;
}

/* The load on CPU 0 that new threads of offcpu_mixed_d wait behind. */
NOCLEVER void *offcpu_loader(void *arg)
{
	struct mixed *m = arg;

	m->tid = gettid();
	pin(0);
	offcpu_burn_until(m->born + m->seconds * 1000000000ull);
	m->lifetime = now_ns() - m->born;
	return NULL;
}

static void mixed_start(struct mixed *m, void *(*fn)(void *))
{
	m->born = now_ns();
	if (pthread_create(&m->thread, NULL, fn, m)) {
		perror("offcpu: pthread_create");
		exit(1);
	}
}

/*
 * Threads a, b and c live S seconds each; meanwhile two loaders spin on
 * CPU 0 and the main thread, pinned there too at nice 10, makes short
 * threads (d: 1 ms on the CPU, 1 ms asleep) one after another, each
 * waiting for the CPU from its creation on (tens of ms: it inherits the
 * pin and the nice).
 */
static int do_mixed(unsigned int seconds)
{
	void *(*fn[3])(void *) = { offcpu_mixed_a, offcpu_mixed_b, offcpu_mixed_c };
	struct mixed m[3] = {
		{ .run_ms = 30, .sleep_ms = 70 },
		{ .run_ms = 60, .sleep_ms = 40 },
		{ .run_ms = 5, .sleep_ms = 45 },
	};
	struct mixed load[2] = { { .seconds = seconds }, { .seconds = seconds } };
	uint64_t end, d_life = 0, n_d = 0;

	for (int i = 0; i < 3; i++) {
		m[i].seconds = seconds;
		mixed_start(&m[i], fn[i]);
	}
	for (int i = 0; i < 2; i++)
		mixed_start(&load[i], offcpu_loader);
	pin(0);
	/* Inherited by the short threads: they wait long for CPU 0. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	end = now_ns() + seconds * 1000000000ull;
	while (now_ns() < end) {
		struct mixed d = { .run_ms = 1, .sleep_ms = 1, .rounds = 1 };

		mixed_start(&d, offcpu_mixed_d);
		pthread_join(d.thread, NULL);
		d_life += d.lifetime;
		n_d++;
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(m[i].thread, NULL);
		printf("lifetime_%c_ns %llu\ntid_%c %d\ncycles_%c %llu\n", 'a' + i,
		       (unsigned long long)m[i].lifetime, 'a' + i, (int)m[i].tid, 'a' + i,
		       (unsigned long long)m[i].cycles);
		printf("ran_%c_ns %llu\nwaited_%c_ns %llu\n", 'a' + i,
		       (unsigned long long)m[i].ran_ns, 'a' + i,
		       (unsigned long long)m[i].waited_ns);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(load[i].thread, NULL);
		printf("tid_loader%d %d\n", i, (int)load[i].tid);
	}
	printf("lifetime_d_ns %llu\nthreads_d %llu\n", (unsigned long long)d_life,
	       (unsigned long long)n_d);
	return 0;
}

/*
 * One side of the ping-pong: read a byte from in, write it to out, until
 * the clock passes end (checked every 256 trips) or the other side is gone.
 * The six counters are live across both calls, so the compiler keeps them
 * in the six registers a call preserves, rbp among them where it is not a
 * frame pointer; each trip changes them all.
 */
NOCLEVER uint64_t offcpu_pingpong_loop(int in, int out, int first, uint64_t end)
{
	uint64_t a = 0, b = 1, c = 2, d = 3, e = 4, f = 5;
	char byte = 0;

	if (first && write(out, &byte, 1) != 1)
		return 0;
	for (;;) {
		if (read(in, &byte, 1) != 1)
			break;
		a++;
		b += a;
		c ^= b;
		d += c >> 3;
		e = e * 3 + d;
		f += e ^ a;
		if (write(out, &byte, 1) != 1)
			break;
		if (!(a & 255) && now_ns() >= end)
			break;
	}
	/* All six used after the loop: none can be dropped. */
	return a + ((b ^ c ^ d ^ e ^ f) & 1);
}

static int do_pingpong(unsigned int seconds)
{
	int ping[2], pong[2];
	uint64_t end, trips;
	pid_t child;

	if (pipe(ping) || pipe(pong)) {
		perror("pipe");
		return 1;
	}
	pin(0);
	end = now_ns() + seconds * 1000000000ull;
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(ping[1]);
		close(pong[0]);
		offcpu_pingpong_loop(ping[0], pong[1], 0, UINT64_MAX);
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	trips = offcpu_pingpong_loop(pong[0], ping[1], 1, end);
	close(ping[1]); /* the child's read() sees the end */
	waitpid(child, NULL, 0);
	printf("round_trips %llu\n", (unsigned long long)trips);
	return 0;
}

NOCLEVER void offcpu_settle(void)
{
	sleep_ms(1000);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "early") && argc == 4)
		return do_sleep(a, (unsigned int)b);
	offcpu_settle();
	if (!strcmp(what, "sleep") && argc == 4)
		return do_sleep(a, (unsigned int)b);
	if (!strcmp(what, "spin") && argc == 4)
		return do_spin(a, (unsigned int)b);
	if (!strcmp(what, "dio") && argc == 4)
		return do_dio(argv[2], b);
	if (!strcmp(what, "migrate") && argc == 4)
		return do_migrate(a, (unsigned int)b);
	if (!strcmp(what, "mixed") && argc == 3)
		return do_mixed((unsigned int)a);
	if (!strcmp(what, "pingpong") && argc == 3)
		return do_pingpong((unsigned int)a);
	fprintf(stderr, "usage: offcpu sleep N MS | early N MS | spin THREADS S | dio FILE N | "
			"migrate N MS | mixed S | pingpong S\n");
	return 2;
}
