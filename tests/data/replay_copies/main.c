#include <stdio.h>

unsigned scan(const unsigned char *p, unsigned long n, unsigned *table);
unsigned twice(const unsigned char *p, const unsigned *table);

static unsigned table[4096];

int main(void) {
  unsigned char text[64];
  for (int i = 0; i < 64; i++)
    text[i] = (unsigned char)(i * 7 + 3);
  unsigned s = scan(text, sizeof text, table);
  printf("%u %u\n", s, twice(text + 5, table));
  return 0;
}
