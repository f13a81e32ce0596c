/*
 * ringrd: a reader of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF) that maps
 * its data pages once.
 *
 * libbpf's reader maps the data pages twice in a row, so that a record
 * that runs past the end of the ring reads as one piece. The kernel fills
 * that whole mapping's page tables as it makes it, so every page of the
 * ring counted twice in VmRSS (a 2 MiB ring showed as 4 MiB), though the
 * kernel holds it once. This reader maps the data once and copies the few
 * records that wrap into a buffer of its own. The ring's protocol (see
 * the kernel's kernel/bpf/ringbuf.c): a page with the consumer's position
 * (ours to write), a page with the producer's (read only), then the data;
 * each record is an 8-byte header (its length, a "busy" bit while the
 * program still writes it, a "discard" bit for a record to skip) and its
 * bytes, rounded up to 8.
 */
#ifndef EBPROF_BPF_RINGRD_H
#define EBPROF_BPF_RINGRD_H

#include <stddef.h>

struct ringrd;

/* One record: its bytes, valid only during the call. <0 stops the reading. */
typedef int (*ringrd_fn)(void *ctx, void *data, size_t size);

/*
 * Maps the ring buffer map_fd (which stays the caller's to close). Returns
 * 0, or -errno: -EINVAL when map_fd is not a ring buffer.
 */
int ringrd_open(int map_fd, struct ringrd **out);

/*
 * The same over memory the caller holds (tests): the consumer's position
 * at consumer, the producer's at producer_page, the data of size bytes (a
 * power of 2) page_size bytes after it.
 */
int ringrd_over(void *consumer, void *producer_page, size_t page_size, size_t size,
		struct ringrd **out);

/*
 * Hands fn every record committed since the last call, in order, and
 * frees their room in the ring as it goes. Stops at a record still being
 * written (its commit wakes a poll of the fd). Returns the records handed
 * over, or fn's negative return (that record is consumed), or -ENOMEM
 * when a record that wraps could not be copied (it stays, for the next
 * call), or -EBADMSG for a header longer than the ring (what the ring
 * held is dropped: its records cannot be told apart any more).
 */
int ringrd_consume(struct ringrd *r, ringrd_fn fn, void *ctx);

/*
 * Waits up to timeout_ms (-1: no limit; 0: no wait) for a record, then
 * ringrd_consume(). An interrupted wait returns 0.
 */
int ringrd_poll(struct ringrd *r, int timeout_ms, ringrd_fn fn, void *ctx);

/* The fd to poll() for records (POLLIN while any are there): the map's. */
int ringrd_fd(const struct ringrd *r);

/* Bytes of data in the ring. */
size_t ringrd_size(const struct ringrd *r);

void ringrd_free(struct ringrd *r);

#endif
