/* test_no_cuda.c - the gpu suite of a build without CUDA: always skipped. */
#include <stdio.h>

int main(void) {
  printf("1..0 # SKIP built without CUDA\n");
  return 77;
}
