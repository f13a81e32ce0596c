/*
 * ringrd: the ring buffer read through one mapping of its data (see
 * ringrd.h for why, and for the layout).
 */
#include "bpf/ringrd.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

struct ringrd {
	int fd; /* -1 over the caller's memory */
	uint64_t *consumer;
	const uint64_t *producer;
	const unsigned char *data;
	size_t size; /* a power of 2 */
	size_t page;
	void *ro_map; /* producer page and data, when mapped */
	size_t ro_len;
	unsigned char *wrap; /* a wrapping record, put together */
	size_t wrap_cap;
};

static bool ringrd_pow2(size_t n)
{
	return n && !(n & (n - 1));
}

static int ringrd_new(struct ringrd **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->fd = -1;
	return 0;
}

int ringrd_over(void *consumer, void *producer_page, size_t page_size, size_t size,
		struct ringrd **out)
{
	int err;

	*out = NULL;
	if (!consumer || !producer_page || !ringrd_pow2(size) || size % 8)
		return -EINVAL;
	err = ringrd_new(out);
	if (err)
		return err;
	(*out)->consumer = consumer;
	(*out)->producer = producer_page;
	(*out)->data = (const unsigned char *)producer_page + page_size;
	(*out)->size = size;
	(*out)->page = page_size;
	return 0;
}

int ringrd_open(int map_fd, struct ringrd **out)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	struct ringrd *r;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	*out = NULL;
	if (page <= 0)
		return -EINVAL;
	err = bpf_obj_get_info_by_fd(map_fd, &info, &len); /* libbpf 1: -errno */
	if (err)
		return err < 0 ? err : -EINVAL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !ringrd_pow2(info.max_entries) ||
	    info.max_entries % (uint32_t)page)
		return -EINVAL;
	err = ringrd_new(&r);
	if (err)
		return err;
	r->fd = map_fd;
	r->page = (size_t)page;
	r->size = info.max_entries;
	/* The kernel lets us write the consumer's page alone. */
	r->consumer = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (r->consumer == MAP_FAILED) {
		err = -errno;
		r->consumer = NULL;
		goto fail;
	}
	r->ro_len = r->page + r->size;
	r->ro_map = mmap(NULL, r->ro_len, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (r->ro_map == MAP_FAILED) {
		err = -errno;
		r->ro_map = NULL;
		goto fail;
	}
	r->producer = r->ro_map;
	r->data = (const unsigned char *)r->ro_map + r->page;
	*out = r;
	return 0;

fail:
	ringrd_free(r);
	return err;
}

/*
 * The len bytes of the record at ring position pos: in place, or put
 * together in r->wrap when they run past the end. NULL without memory.
 */
static void *ringrd_record(struct ringrd *r, uint64_t pos, size_t len)
{
	size_t off = (size_t)(pos & (r->size - 1)), first = r->size - off;

	if (len <= first)
		return (void *)(r->data + off);
	if (len > r->wrap_cap) {
		unsigned char *grown = realloc(r->wrap, len);

		if (!grown)
			return NULL;
		r->wrap = grown;
		r->wrap_cap = len;
	}
	memcpy(r->wrap, r->data + off, first);
	memcpy(r->wrap + first, r->data, len - first);
	return r->wrap;
}

int ringrd_consume(struct ringrd *r, ringrd_fn fn, void *ctx)
{
	/* Only this reader moves it: a plain read. */
	uint64_t cons = *r->consumer, prod;
	int n = 0;

	/* Until the producer stands where we do: records may come as we read. */
	while ((prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE)) > cons) {
		while (cons < prod) {
			const uint32_t *head = (const uint32_t *)(r->data + (cons & (r->size - 1)));
			uint32_t word = __atomic_load_n(head, __ATOMIC_ACQUIRE);
			uint32_t len = word & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			uint64_t next = cons + (((uint64_t)len + BPF_RINGBUF_HDR_SZ + 7) & ~7ULL);
			int ret = 0;

			if (word & BPF_RINGBUF_BUSY_BIT)
				return n; /* still being written */
			if (len > r->size - BPF_RINGBUF_HDR_SZ) {
				/* No kernel writes it: the rest cannot be told apart, drop it. */
				__atomic_store_n(r->consumer, prod, __ATOMIC_RELEASE);
				return -EBADMSG;
			}
			if (!(word & BPF_RINGBUF_DISCARD_BIT)) {
				void *data = ringrd_record(r, cons + BPF_RINGBUF_HDR_SZ, len);

				if (!data)
					return -ENOMEM;
				ret = fn(ctx, data, len);
				n++;
			}
			cons = next;
			/* The record's room goes back to the producer only now that it is read. */
			__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
			if (ret < 0)
				return ret;
		}
	}
	return n;
}

int ringrd_poll(struct ringrd *r, int timeout_ms, ringrd_fn fn, void *ctx)
{
	if (timeout_ms != 0 && r->fd >= 0) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };

		if (poll(&p, 1, timeout_ms) < 0)
			return errno == EINTR ? 0 : -errno;
	}
	return ringrd_consume(r, fn, ctx);
}

int ringrd_fd(const struct ringrd *r)
{
	return r->fd;
}

size_t ringrd_size(const struct ringrd *r)
{
	return r->size;
}

void ringrd_free(struct ringrd *r)
{
	if (!r)
		return;
	if (r->fd >= 0) {
		if (r->ro_map)
			munmap(r->ro_map, r->ro_len);
		if (r->consumer)
			munmap(r->consumer, r->page);
	}
	free(r->wrap);
	free(r);
}
