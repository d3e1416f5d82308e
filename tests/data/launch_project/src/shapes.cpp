#include "shapes.h"

#include <cmath>

namespace shapes {
namespace {

double distance(Point a, Point b) { return std::hypot(a.x - b.x, a.y - b.y); }

class Circle final : public Shape {
public:
  Circle(Point c, double r) : c_(c), r_(r) {}
  double area() const override { return M_PI * r_ * r_; }
  double perimeter() const override { return 2 * M_PI * r_; }
  std::string name() const override { return "circle"; }
  void move(double dx, double dy) override {
    c_.x += dx;
    c_.y += dy;
  }

private:
  Point c_;
  double r_;
};

class Rectangle final : public Shape {
public:
  Rectangle(Point p, double w, double h) : p_(p), w_(w), h_(h) {}
  double area() const override { return w_ * h_; }
  double perimeter() const override { return 2 * (w_ + h_); }
  std::string name() const override { return "rectangle"; }
  void move(double dx, double dy) override {
    p_.x += dx;
    p_.y += dy;
  }

private:
  Point p_;
  double w_, h_;
};

class Polygon final : public Shape {
public:
  explicit Polygon(std::vector<Point> p) : p_(std::move(p)) {}
  double area() const override {
    double twice = 0;
    for (size_t i = 0; i < p_.size(); ++i) {
      const Point& a = p_[i];
      const Point& b = p_[(i + 1) % p_.size()];
      twice += a.x * b.y - b.x * a.y;
    }
    return std::fabs(twice) / 2;
  }
  double perimeter() const override {
    double total = 0;
    for (size_t i = 0; i < p_.size(); ++i)
      total += distance(p_[i], p_[(i + 1) % p_.size()]);
    return total;
  }
  std::string name() const override { return "polygon/" + std::to_string(p_.size()); }
  void move(double dx, double dy) override {
    for (Point& q : p_) {
      q.x += dx;
      q.y += dy;
    }
  }

private:
  std::vector<Point> p_;
};

} // namespace

std::unique_ptr<Shape> makeCircle(Point center, double radius) {
  return std::make_unique<Circle>(center, radius);
}
std::unique_ptr<Shape> makeRectangle(Point corner, double w, double h) {
  return std::make_unique<Rectangle>(corner, w, h);
}
std::unique_ptr<Shape> makePolygon(std::vector<Point> points) {
  return std::make_unique<Polygon>(std::move(points));
}

} // namespace shapes
