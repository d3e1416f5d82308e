// String processing with std::string/std::vector: identifier case conversion, templates, URL coding, justification.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace text {
namespace {

std::vector<std::string> split_words(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '\'') {
      cur.push_back(ch);
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Splits an identifier into lowercase parts at '_', '-', and lower->upper or ACRONYMWord boundaries.
std::vector<std::string> identifier_parts(const std::string &id) {
  std::vector<std::string> parts;
  std::string cur;
  auto flush = [&]() {
    if (!cur.empty()) parts.push_back(cur);
    cur.clear();
  };
  for (std::size_t i = 0; i < id.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(id[i]);
    if (c == '_' || c == '-' || c == ' ') {
      flush();
      continue;
    }
    bool upper = std::isupper(c) != 0;
    if (upper && i > 0) {
      unsigned char prev = static_cast<unsigned char>(id[i - 1]);
      bool next_lower = i + 1 < id.size() && std::islower(static_cast<unsigned char>(id[i + 1]));
      if (std::islower(prev) || std::isdigit(prev) || (std::isupper(prev) && next_lower)) flush();
    }
    cur.push_back(static_cast<char>(std::tolower(c)));
  }
  flush();
  return parts;
}

std::string join(const std::vector<std::string> &parts, const std::string &sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string capitalize(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string to_style(const std::string &id, int style) {
  std::vector<std::string> parts = identifier_parts(id);
  switch (style) {
    case 0: return join(parts, "_");  // snake_case
    case 1: {                          // camelCase
      for (std::size_t i = 1; i < parts.size(); ++i) parts[i] = capitalize(parts[i]);
      return join(parts, "");
    }
    case 2: {  // PascalCase
      for (auto &p : parts) p = capitalize(p);
      return join(parts, "");
    }
    case 3: {  // SCREAMING_SNAKE
      std::string s = join(parts, "_");
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      return s;
    }
    default: return join(parts, "-");  // kebab-case
  }
}

// Expands ${name} and ${name:-default}; unknown names without a default expand to "".
std::string expand_template(const std::string &tpl, const std::map<std::string, std::string> &vars, int *missing) {
  std::string out;
  std::size_t i = 0;
  while (i < tpl.size()) {
    if (tpl.compare(i, 2, "${") == 0) {
      std::size_t close = tpl.find('}', i + 2);
      if (close != std::string::npos) {
        std::string body = tpl.substr(i + 2, close - i - 2);
        std::string name = body, fallback;
        std::size_t dash = body.find(":-");
        if (dash != std::string::npos) {
          name = body.substr(0, dash);
          fallback = body.substr(dash + 2);
        }
        auto it = vars.find(name);
        if (it != vars.end()) {
          out += it->second;
        } else {
          out += fallback;
          if (dash == std::string::npos) ++*missing;
        }
        i = close + 1;
        continue;
      }
    }
    out.push_back(tpl[i++]);
  }
  return out;
}

std::string url_encode(const std::string &s) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool url_decode(const std::string &s, std::string &out) {
  out.clear();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return false;
      int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return true;
}

// Full justification: words packed greedily, extra spaces distributed left-first.
std::vector<std::string> justify(const std::vector<std::string> &words, std::size_t width) {
  std::vector<std::string> lines;
  std::size_t i = 0;
  while (i < words.size()) {
    std::size_t j = i, len = 0;
    while (j < words.size() && len + words[j].size() + (j - i) <= width) len += words[j++].size();
    if (j == i) len = words[j++].size();  // overlong word on its own line
    std::string line = words[i];
    std::size_t gaps = j - i - 1;
    bool last = j == words.size();
    for (std::size_t k = i + 1; k < j; ++k) {
      std::size_t spaces = 1;
      if (!last && gaps) {
        std::size_t total = width > len ? width - len : gaps;
        spaces = total / gaps + ((k - i - 1) < total % gaps ? 1 : 0);
      }
      line.append(spaces, ' ');
      line += words[k];
    }
    if (line.size() < width) line.append(width - line.size(), ' ');
    lines.push_back(line);
    i = j;
  }
  return lines;
}

bool copy_out(const std::string &s, char *out, std::size_t cap) {
  if (s.size() + 1 > cap) return false;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return true;
}

}  // namespace
}  // namespace text

// Converts an identifier to style 0 snake, 1 camel, 2 Pascal, 3 SCREAMING, 4 kebab. Returns length or -1.
extern "C" int sp_convert_identifier(const char *id, int style, char *out, std::size_t cap) {
  std::string r = text::to_style(id, style);
  return text::copy_out(r, out, cap) ? static_cast<int>(r.size()) : -1;
}

// Expands a template using "k=v" pairs separated by '&' (URL-encoded). Returns missing count or -1.
extern "C" int sp_expand(const char *tpl, const char *query, char *out, std::size_t cap) {
  std::map<std::string, std::string> vars;
  std::string q(query);
  std::size_t start = 0;
  while (start <= q.size()) {
    std::size_t amp = q.find('&', start);
    if (amp == std::string::npos) amp = q.size();
    std::string pair = q.substr(start, amp - start);
    std::size_t eq = pair.find('=');
    std::string key, value;
    if (eq != std::string::npos && text::url_decode(pair.substr(0, eq), key) &&
        text::url_decode(pair.substr(eq + 1), value))
      vars[key] = value;
    start = amp + 1;
  }
  int missing = 0;
  std::string r = text::expand_template(tpl, vars, &missing);
  return text::copy_out(r, out, cap) ? missing : -1;
}

// Justifies text to width and returns a checksum of the lines (URL-encoded then hashed), with the
// number of lines in *nlines.
extern "C" std::uint64_t sp_justify_digest(const char *input, std::size_t width, int *nlines) {
  std::vector<std::string> lines = text::justify(text::split_words(input), width ? width : 1);
  *nlines = static_cast<int>(lines.size());
  std::uint64_t h = 1469598103934665603ull;
  std::map<std::string, int> freq;
  for (const std::string &line : lines) {
    std::string enc = text::url_encode(line);
    std::string back;
    if (!text::url_decode(enc, back) || back != line) return 0;
    for (char c : enc) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    for (const std::string &w : text::split_words(line)) freq[text::to_style(w, 0)]++;
  }
  for (const auto &kv : freq) h += kv.first.size() * static_cast<std::uint64_t>(kv.second);
  return h;
}
