/* test_sha256.c - FIPS 180-4 test vectors for SHA-256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_sha256.h"
#include "tap.h"

/* Hashes len bytes of msg and compares with the expected hex digest. */
static void check(const char *what, const void *msg, size_t len,
                  const char *expect) {
  char hex[65];
  odb_sha256_hex(msg, len, hex);
  if (!tap_ok(strcmp(hex, expect) == 0, "%s", what))
    tap_diag("got %s, expected %s", hex, expect);
}

int main(void) {
  const char *m448 =
    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  const char *m896 =
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  char *million = malloc(1000000);
  uint8_t raw[32];
  check("empty string", "", 0,
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check("\"abc\"", "abc", 3,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  check("448-bit message", m448, strlen(m448),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  check("896-bit message", m896, strlen(m896),
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  if (million) {
    memset(million, 'a', 1000000);
    check("one million 'a'", million, 1000000,
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
  }
  /* padding boundaries (digests from an independent implementation) */
  {
    static const struct { size_t n; const char *hex; } b[] = {
      { 55,
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
      { 56,
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
      { 63,
        "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
      { 64,
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
      { 119,
        "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
      { 120,
        "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c" },
    };
    char a[128];
    memset(a, 'a', sizeof a);
    for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i) {
      char what[40];
      snprintf(what, sizeof what, "%zu times 'a'", b[i].n);
      check(what, a, b[i].n, b[i].hex);
    }
  }
  /* fed in pieces: every split of the 896-bit message into three (pieces
     across and on block edges) gives its digest */
  {
    size_t n = strlen(m896);
    int bad = 0, splits = 0;
    for (size_t i = 0; i <= n; i += 7)
      for (size_t j = i; j <= n; j += 5) {
        odb_sha256_ctx c;
        char hex[65];
        odb_sha256_init(&c);
        odb_sha256_update(&c, m896, i);
        odb_sha256_update(&c, m896 + i, j - i);
        odb_sha256_update(&c, m896 + j, n - j);
        odb_sha256_final(&c, raw);
        odb_sha256_to_hex(raw, hex);
        bad += strcmp(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51"
                           "afac45037afee9d1") != 0;
        ++splits;
      }
    tap_ok(bad == 0, "896-bit message in three pieces: %d of %d splits "
           "give its digest", splits - bad, splits);
  }
  odb_sha256("abc", 3, raw);
  tap_ok(raw[0] == 0xba && raw[31] == 0xad, "raw digest bytes of \"abc\"");
  check("NULL data with length 0", NULL, 0,
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  return tap_done();
}
