/* Canonical Huffman coding: heap-built code lengths with a length limit, bit I/O, encoder and decoder. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SYMBOLS 256
#define MAX_BITS 15

typedef struct {
  uint32_t weight;
  int symbol; /* -1 for internal nodes */
  int left, right;
} HNode;

typedef struct {
  uint8_t lengths[SYMBOLS];
  uint16_t codes[SYMBOLS];
  uint16_t count_per_len[MAX_BITS + 1];
  uint8_t sorted[SYMBOLS];
  int nsorted;
} CodeBook;

typedef struct {
  uint8_t *buf;
  size_t cap;
  size_t bitpos;
} BitWriter;

typedef struct {
  const uint8_t *buf;
  size_t nbits;
  size_t bitpos;
} BitReader;

static int node_less(const HNode *nodes, int a, int b) {
  if (nodes[a].weight != nodes[b].weight) return nodes[a].weight < nodes[b].weight;
  return a < b;
}

static void heap_push(int *heap, int *n, const HNode *nodes, int id) {
  int i = (*n)++;
  heap[i] = id;
  while (i > 0) {
    int p = (i - 1) / 2;
    if (!node_less(nodes, heap[i], heap[p])) break;
    int t = heap[i];
    heap[i] = heap[p];
    heap[p] = t;
    i = p;
  }
}

static int heap_pop(int *heap, int *n, const HNode *nodes) {
  int top = heap[0];
  heap[0] = heap[--*n];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < *n && node_less(nodes, heap[l], heap[m])) m = l;
    if (r < *n && node_less(nodes, heap[r], heap[m])) m = r;
    if (m == i) break;
    int t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
  return top;
}

static void assign_depths(const HNode *nodes, int id, int depth, uint8_t *lengths) {
  if (nodes[id].symbol >= 0) {
    lengths[nodes[id].symbol] = (uint8_t)(depth ? depth : 1);
    return;
  }
  assign_depths(nodes, nodes[id].left, depth + 1, lengths);
  assign_depths(nodes, nodes[id].right, depth + 1, lengths);
}

/* Builds code lengths; if any exceeds MAX_BITS, flattens the weights and retries. */
static void build_lengths(const uint32_t *freq, uint8_t *lengths) {
  uint32_t w[SYMBOLS];
  memcpy(w, freq, sizeof w);
  for (int attempt = 0; attempt < 16; ++attempt) {
    HNode nodes[2 * SYMBOLS];
    int heap[SYMBOLS], hn = 0, count = 0;
    memset(lengths, 0, SYMBOLS);
    for (int s = 0; s < SYMBOLS; ++s)
      if (w[s]) {
        nodes[count] = (HNode){w[s], s, -1, -1};
        heap_push(heap, &hn, nodes, count++);
      }
    if (!count) return;
    while (hn > 1) {
      int a = heap_pop(heap, &hn, nodes), b = heap_pop(heap, &hn, nodes);
      nodes[count] = (HNode){nodes[a].weight + nodes[b].weight, -1, a, b};
      heap_push(heap, &hn, nodes, count++);
    }
    assign_depths(nodes, heap[0], 0, lengths);
    int longest = 0;
    for (int s = 0; s < SYMBOLS; ++s)
      if (lengths[s] > longest) longest = lengths[s];
    if (longest <= MAX_BITS) return;
    for (int s = 0; s < SYMBOLS; ++s)
      if (w[s]) w[s] = (w[s] >> 1) | 1u;
  }
}

static void build_codebook(CodeBook *cb, const uint8_t *lengths) {
  uint16_t next[MAX_BITS + 2];
  memcpy(cb->lengths, lengths, SYMBOLS);
  memset(cb->count_per_len, 0, sizeof cb->count_per_len);
  for (int s = 0; s < SYMBOLS; ++s) cb->count_per_len[lengths[s]]++;
  cb->count_per_len[0] = 0;
  uint16_t code = 0;
  for (int len = 1; len <= MAX_BITS; ++len) {
    code = (uint16_t)((code + cb->count_per_len[len - 1]) << 1);
    next[len] = code;
  }
  cb->nsorted = 0;
  for (int len = 1; len <= MAX_BITS; ++len)
    for (int s = 0; s < SYMBOLS; ++s)
      if (lengths[s] == len) {
        cb->codes[s] = next[len]++;
        cb->sorted[cb->nsorted++] = (uint8_t)s;
      }
}

static int put_bits(BitWriter *w, uint32_t value, int nbits) {
  for (int i = nbits - 1; i >= 0; --i) {
    size_t byte = w->bitpos >> 3;
    if (byte >= w->cap) return 0;
    if ((w->bitpos & 7) == 0) w->buf[byte] = 0;
    if ((value >> i) & 1u) w->buf[byte] |= (uint8_t)(0x80u >> (w->bitpos & 7));
    w->bitpos++;
  }
  return 1;
}

static int get_bit(BitReader *r) {
  if (r->bitpos >= r->nbits) return -1;
  int bit = (r->buf[r->bitpos >> 3] >> (7 - (r->bitpos & 7))) & 1;
  r->bitpos++;
  return bit;
}

/* Canonical decode: walks lengths, comparing the running code with the first code of each length. */
static int decode_symbol(const CodeBook *cb, BitReader *r) {
  int code = 0, first = 0, index = 0;
  for (int len = 1; len <= MAX_BITS; ++len) {
    int bit = get_bit(r);
    if (bit < 0) return -1;
    code |= bit;
    int count = cb->count_per_len[len];
    if (code - first < count) return cb->sorted[index + code - first];
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  return -1;
}

static size_t encoded_bits(const CodeBook *cb, const uint32_t *freq) {
  size_t bits = 0;
  for (int s = 0; s < SYMBOLS; ++s) bits += (size_t)freq[s] * cb->lengths[s];
  return bits;
}

/* Encodes data; output is 256 length bytes followed by the bitstream. Returns bits of payload,
   or -1 if out is too small. */
long huff_encode(const uint8_t *data, size_t n, uint8_t *out, size_t cap) {
  uint32_t freq[SYMBOLS] = {0};
  uint8_t lengths[SYMBOLS];
  CodeBook cb;
  for (size_t i = 0; i < n; ++i) freq[data[i]]++;
  build_lengths(freq, lengths);
  for (int s = 0; s < SYMBOLS; ++s)
    if (lengths[s] > MAX_BITS) return -1;
  build_codebook(&cb, lengths);
  if (cap < SYMBOLS) return -1;
  memcpy(out, lengths, SYMBOLS);
  BitWriter w = {out + SYMBOLS, cap - SYMBOLS, 0};
  for (size_t i = 0; i < n; ++i)
    if (!put_bits(&w, cb.codes[data[i]], cb.lengths[data[i]])) return -1;
  return encoded_bits(&cb, freq) == w.bitpos ? (long)w.bitpos : -1;
}

/* Decodes count symbols from a buffer produced by huff_encode. Returns 0 on success. */
int huff_decode(const uint8_t *in, size_t nbits, uint8_t *out, size_t count) {
  CodeBook cb;
  for (int s = 0; s < SYMBOLS; ++s)
    if (in[s] > MAX_BITS) return -1;
  build_codebook(&cb, in);
  BitReader r = {in + SYMBOLS, nbits, 0};
  for (size_t i = 0; i < count; ++i) {
    int s = decode_symbol(&cb, &r);
    if (s < 0) return -1;
    out[i] = (uint8_t)s;
  }
  return 0;
}

/* Round-trips a skewed synthetic buffer; returns payload bits or -1 on any mismatch. */
long huff_roundtrip_synthetic(size_t n, uint32_t seed) {
  uint8_t *src = malloc(n + 1), *packed = malloc(n * 2 + SYMBOLS + 16), *back = malloc(n + 1);
  long result = -1;
  if (src && packed && back) {
    uint32_t x = seed | 1u;
    for (size_t i = 0; i < n; ++i) {
      x = x * 1664525u + 1013904223u;
      uint32_t r = x >> 24;
      src[i] = (uint8_t)(r < 128 ? 'e' : r < 192 ? 't' : r < 224 ? 'a' : r < 240 ? 'o' : (x >> 8) & 0xffu);
    }
    long bits = huff_encode(src, n, packed, n * 2 + SYMBOLS + 16);
    if (bits >= 0 && huff_decode(packed, (size_t)bits, back, n) == 0 && memcmp(src, back, n) == 0)
      result = bits;
  }
  free(src);
  free(packed);
  free(back);
  return result;
}
