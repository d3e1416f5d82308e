#include "common.h"

#include <stdio.h>

int main(int argc, char **argv) {
  const char *text = argc > 1 ? argv[1] : "Seven tiny C files, 3 build styles and 1 replay file";
  int sides[] = {3, 4, 5, 6, 7, 8, 9};
  struct counts c;
  words_count(text, &c);
  printf("%u words, %u letters, %u digits, %u vowels, hash %08x\n", c.words, c.letters,
         c.digits, c.vowels, (unsigned)c.hash);
  printf("area %ld, perimeter %ld, score %ld, clamped %d\n", geom_area(sides, 7),
         geom_perimeter(sides, 7), geom_score(sides, 7), clamp(argc * 100, 0, 150));
  return 0;
}
