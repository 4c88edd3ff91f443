/* odb_shown.c - terminal-safe text (see odb_shown.h). */
#include <stdio.h>
#include <string.h>
#include "odb_shown.h"

/* Length of the well-formed UTF-8 sequence at p (of at most left bytes)
** that is not a C1 control, or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
  size_t n = *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
           : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
  if (n == 0 || n > left) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((p[k] & 0xc0) != 0x80) return 0;
  if (*p == 0xc2 && p[1] < 0xa0) return 0;          /* C1 */
  return n;
}

/* Width of item i of s as shown, and its byte length in *k. */
static size_t item(const unsigned char *p, size_t left, size_t *k)
{
  if (*p >= 0x80 && (*k = utf8_len(p, left)) != 0) return *k;
  *k = 1;
  if (*p >= 0x20 && *p < 0x7f && *p != '\\') return 1;
  return *p == '\\' ? 2 : 4;
}

/* Two passes: the whole width first, so that a text that does not fit is
** cut at an item boundary with room left for "...". */
const char *odb_shown_n(const char *s, size_t n, char *out, size_t cap)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t total = 0, len = 0, k;
  if (!cap) return out;
  for (size_t i = 0; i < n; i += k) total += item(p + i, n - i, &k);
  size_t room = total < cap ? cap - 1 : (cap > 3 ? cap - 4 : 0);
  for (size_t i = 0; i < n; i += k) {
    size_t w = item(p + i, n - i, &k);
    if (len + w > room) break;
    if (w == k) memcpy(out + len, p + i, k);
    else if (p[i] == '\\') memcpy(out + len, "\\\\", 2);
    else snprintf(out + len, cap - len, "\\x%02x", p[i]);
    len += w;
  }
  if (total >= cap && cap > 3) { memcpy(out + len, "...", 3); len += 3; }
  out[len] = '\0';
  return out;
}

const char *odb_shown(const char *s, char *out, size_t cap)
{
  if (!s) s = "(null)";
  return odb_shown_n(s, strlen(s), out, cap);
}
