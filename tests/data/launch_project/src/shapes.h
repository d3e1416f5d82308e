#ifndef LAUNCH_PROJECT_SHAPES_H
#define LAUNCH_PROJECT_SHAPES_H
#include <memory>
#include <string>
#include <vector>

namespace shapes {

struct Point {
  double x = 0, y = 0;
};

class Shape {
public:
  virtual ~Shape() = default;
  virtual double area() const = 0;
  virtual double perimeter() const = 0;
  virtual std::string name() const = 0;
  virtual void move(double dx, double dy) = 0;
};

std::unique_ptr<Shape> makeCircle(Point center, double radius);
std::unique_ptr<Shape> makeRectangle(Point corner, double w, double h);
std::unique_ptr<Shape> makePolygon(std::vector<Point> points);

template <typename T, typename F> double sumOf(const std::vector<T>& items, F f) {
  double total = 0;
  for (const auto& item : items)
    total += f(item);
  return total;
}

} // namespace shapes
#endif
