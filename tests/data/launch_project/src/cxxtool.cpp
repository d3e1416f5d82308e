#include "lib.h"
#include "shapes.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

using namespace shapes;

namespace {

std::vector<std::unique_ptr<Shape>> makeScene(int n) {
  std::vector<std::unique_ptr<Shape>> scene;
  for (int i = 0; i < n; ++i) {
    double f = 1.0 + i % 5;
    switch (i % 3) {
    case 0:
      scene.push_back(makeCircle({f, -f}, f / 2));
      break;
    case 1:
      scene.push_back(makeRectangle({-f, f}, f, f + 1));
      break;
    default:
      scene.push_back(makePolygon({{0, 0}, {f, 0}, {f, f}, {0, f + 2}}));
    }
  }
  return scene;
}

template <typename Map> std::string histogram(const Map& counts) {
  std::string out;
  for (const auto& [name, count] : counts)
    out += name + "=" + std::to_string(count) + " ";
  return out;
}

} // namespace

int main() {
  auto scene = makeScene(30);
  for (size_t i = 0; i < scene.size(); ++i)
    scene[i]->move(double(i), -double(i) / 2);
  std::sort(scene.begin(), scene.end(),
            [](const auto& a, const auto& b) { return a->area() < b->area(); });
  std::map<std::string, int> counts;
  for (const auto& s : scene)
    counts[s->name()]++;
  double area = sumOf(scene, [](const auto& s) { return s->area(); });
  double perimeter = sumOf(scene, [](const auto& s) { return s->perimeter(); });
  std::string names = histogram(counts);
  struct text_stats st;
  text_scan(names.data(), names.size(), &st);
  struct table* t = table_new(2);
  for (const auto& [name, count] : counts)
    table_add(t, name.data(), name.size(), count);
  std::printf("area %.6f perimeter %.6f\n%s\nwords %zu hash %08x digest %llu\n", area, perimeter,
              names.c_str(), st.words, unsigned(st.hash),
              static_cast<unsigned long long>(table_digest(t)));
  table_free(t);
  return 0;
}
