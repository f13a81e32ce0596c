/* steal: the hypervisor's share of this guest's CPUs, from /proc/stat. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/steal.h"

int steal_parse(const char *text, uint64_t *ticks)
{
	const char *p = text;
	uint64_t v = 0;

	/* The first line is the total of all CPUs; the others are per CPU. */
	while (strncmp(p, "cpu ", 4)) {
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	p += 4;
	/* user nice system idle iowait irq softirq steal */
	for (int i = 0; i < 8; i++) {
		char *end;

		while (*p == ' ')
			p++;
		if (*p == '\n' || !*p) {
			if (i < 7)
				return -EINVAL; /* not even the seven every kernel has */
			v = 0;
			break;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || (*end != ' ' && *end != '\n' && *end))
			return -EINVAL;
		p = end;
	}
	*ticks = v;
	return 0;
}

int steal_read_ns(uint64_t *ns)
{
	char buf[4096];
	uint64_t ticks;
	ssize_t got;
	long hz;
	int fd, ret;

	fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The "cpu " line comes first: the first block holds it. */
	got = read(fd, buf, sizeof(buf) - 1);
	ret = got < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	buf[got] = '\0';
	ret = steal_parse(buf, &ticks);
	if (ret)
		return ret;
	hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return -EINVAL;
	*ns = ticks * (1000000000ull / (uint64_t)hz);
	return 0;
}
