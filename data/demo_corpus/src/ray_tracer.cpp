// A tiny Whitted-style ray tracer: spheres, planes and boxes, Phong shading, shadows, reflections, supersampling.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rt {
namespace {

struct V3 {
  double x = 0, y = 0, z = 0;
  V3() = default;
  V3(double a, double b, double c) : x(a), y(b), z(c) {}
  V3 operator+(const V3 &o) const { return {x + o.x, y + o.y, z + o.z}; }
  V3 operator-(const V3 &o) const { return {x - o.x, y - o.y, z - o.z}; }
  V3 operator*(double s) const { return {x * s, y * s, z * s}; }
  V3 mul(const V3 &o) const { return {x * o.x, y * o.y, z * o.z}; }
  double dot(const V3 &o) const { return x * o.x + y * o.y + z * o.z; }
  V3 cross(const V3 &o) const { return {y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x}; }
  double length() const { return std::sqrt(dot(*this)); }
  V3 normalized() const {
    double l = length();
    return l > 0 ? *this * (1.0 / l) : *this;
  }
};

struct Ray {
  V3 origin, dir;
};

struct Material {
  V3 colour;
  double diffuse, specular, shininess, reflect;
  bool checker;
};

struct Hit {
  double t;
  V3 point, normal;
  const Material *mat;
};

class Shape {
 public:
  explicit Shape(Material m) : mat_(m) {}
  virtual ~Shape() = default;
  virtual bool intersect(const Ray &r, double tmax, Hit &h) const = 0;
  const Material &material() const { return mat_; }

 private:
  Material mat_;
};

class Sphere : public Shape {
 public:
  Sphere(V3 c, double r, Material m) : Shape(m), c_(c), r_(r) {}
  bool intersect(const Ray &ray, double tmax, Hit &h) const override {
    V3 oc = ray.origin - c_;
    double b = oc.dot(ray.dir), c = oc.dot(oc) - r_ * r_;
    double disc = b * b - c;
    if (disc < 0) return false;
    double s = std::sqrt(disc);
    double t = -b - s;
    if (t < 1e-6) t = -b + s;
    if (t < 1e-6 || t >= tmax) return false;
    h.t = t;
    h.point = ray.origin + ray.dir * t;
    h.normal = (h.point - c_) * (1.0 / r_);
    h.mat = &material();
    return true;
  }

 private:
  V3 c_;
  double r_;
};

class Plane : public Shape {
 public:
  Plane(V3 n, double d, Material m) : Shape(m), n_(n.normalized()), d_(d) {}
  bool intersect(const Ray &ray, double tmax, Hit &h) const override {
    double denom = n_.dot(ray.dir);
    if (std::fabs(denom) < 1e-9) return false;
    double t = (d_ - n_.dot(ray.origin)) / denom;
    if (t < 1e-6 || t >= tmax) return false;
    h.t = t;
    h.point = ray.origin + ray.dir * t;
    h.normal = denom < 0 ? n_ : n_ * -1.0;
    h.mat = &material();
    return true;
  }

 private:
  V3 n_;
  double d_;
};

class Box : public Shape {
 public:
  Box(V3 lo, V3 hi, Material m) : Shape(m), lo_(lo), hi_(hi) {}
  bool intersect(const Ray &ray, double tmax, Hit &h) const override {
    double t0 = 1e-6, t1 = tmax;
    int axis = -1;
    const double o[3] = {ray.origin.x, ray.origin.y, ray.origin.z};
    const double d[3] = {ray.dir.x, ray.dir.y, ray.dir.z};
    const double lo[3] = {lo_.x, lo_.y, lo_.z}, hi[3] = {hi_.x, hi_.y, hi_.z};
    for (int i = 0; i < 3; ++i) {
      if (std::fabs(d[i]) < 1e-12) {
        if (o[i] < lo[i] || o[i] > hi[i]) return false;
        continue;
      }
      double inv = 1.0 / d[i];
      double ta = (lo[i] - o[i]) * inv, tb = (hi[i] - o[i]) * inv;
      if (ta > tb) std::swap(ta, tb);
      if (ta > t0) {
        t0 = ta;
        axis = i;
      }
      t1 = std::min(t1, tb);
      if (t0 > t1) return false;
    }
    if (axis < 0) return false;
    h.t = t0;
    h.point = ray.origin + ray.dir * t0;
    double sign = d[axis] > 0 ? -1.0 : 1.0;
    h.normal = V3(axis == 0 ? sign : 0, axis == 1 ? sign : 0, axis == 2 ? sign : 0);
    h.mat = &material();
    return true;
  }

 private:
  V3 lo_, hi_;
};

struct Light {
  V3 pos, colour;
};

class Scene {
 public:
  void add(std::unique_ptr<Shape> s) { shapes_.push_back(std::move(s)); }
  void light(V3 p, V3 c) { lights_.push_back({p, c}); }

  bool closest(const Ray &r, Hit &best) const {
    bool any = false;
    double tmax = 1e30;
    for (const auto &s : shapes_) {
      Hit h;
      if (s->intersect(r, tmax, h)) {
        best = h;
        tmax = h.t;
        any = true;
      }
    }
    return any;
  }

  bool occluded(const V3 &from, const V3 &to) const {
    V3 d = to - from;
    double dist = d.length();
    Ray r{from, d * (1.0 / dist)};
    Hit h;
    for (const auto &s : shapes_)
      if (s->intersect(r, dist, h)) return true;
    return false;
  }

  V3 shade(const Ray &r, int depth) const {
    Hit h;
    if (!closest(r, h)) return sky(r.dir);
    const Material &m = *h.mat;
    V3 base = m.colour;
    if (m.checker && std::fmod(std::fabs(std::floor(h.point.x) + std::floor(h.point.z)), 2.0) == 1.0)
      base = base * 0.3;
    V3 colour = base * 0.08;
    V3 p = h.point + h.normal * 1e-5;
    for (const Light &l : lights_) {
      if (occluded(p, l.pos)) continue;
      V3 ldir = (l.pos - h.point).normalized();
      double ndl = std::max(0.0, h.normal.dot(ldir));
      V3 refl = h.normal * (2 * h.normal.dot(ldir)) - ldir;
      double spec = std::pow(std::max(0.0, refl.dot(r.dir * -1.0)), m.shininess);
      colour = colour + base.mul(l.colour) * (m.diffuse * ndl) + l.colour * (m.specular * spec);
    }
    if (depth > 0 && m.reflect > 0) {
      V3 rd = r.dir - h.normal * (2 * r.dir.dot(h.normal));
      colour = colour * (1 - m.reflect) + shade(Ray{p, rd.normalized()}, depth - 1) * m.reflect;
    }
    return colour;
  }

 private:
  static V3 sky(const V3 &d) {
    double t = 0.5 * (d.y + 1.0);
    return V3(1, 1, 1) * (1 - t) + V3(0.5, 0.7, 1.0) * t;
  }
  std::vector<std::unique_ptr<Shape>> shapes_;
  std::vector<Light> lights_;
};

Scene build_scene(int spheres) {
  Scene s;
  s.add(std::make_unique<Plane>(V3(0, 1, 0), -1.0, Material{V3(0.9, 0.9, 0.9), 0.8, 0.1, 8, 0.2, true}));
  s.add(std::make_unique<Box>(V3(-3, -1, 4), V3(-2, 0.5, 5), Material{V3(0.2, 0.8, 0.3), 0.7, 0.3, 16, 0.0, false}));
  for (int i = 0; i < spheres; ++i) {
    double a = i * 2.399963;
    V3 c(std::cos(a) * (1.0 + 0.3 * i), -0.5 + 0.15 * (i % 3), 6.0 + std::sin(a) * (1.0 + 0.3 * i));
    Material m{V3(0.3 + 0.1 * (i % 7), 0.2 + 0.15 * (i % 5), 0.9 - 0.1 * (i % 4)), 0.7, 0.5, 32, 0.15 * (i % 3), false};
    s.add(std::make_unique<Sphere>(c, 0.5, m));
  }
  s.light(V3(-5, 8, -2), V3(1, 1, 1));
  s.light(V3(6, 5, 3), V3(0.4, 0.35, 0.3));
  return s;
}

std::uint8_t to_byte(double v) {
  v = std::sqrt(std::min(1.0, std::max(0.0, v)));  // gamma 2
  return static_cast<std::uint8_t>(v * 255.0 + 0.5);
}

}  // namespace
}  // namespace rt

// Renders a w x h image (3 bytes per pixel into rgb, which must hold w*h*3 bytes) with samples^2
// supersampling and returns a checksum of the pixels.
extern "C" std::uint64_t rt_render(int w, int h, int samples, int spheres, std::uint8_t *rgb) {
  using rt::V3;
  if (w <= 0 || h <= 0 || samples <= 0 || samples > 8 || spheres < 0 || spheres > 64) return 0;
  rt::Scene scene = rt::build_scene(spheres);
  V3 eye(0, 0.5, -2), target(0, 0, 6), up(0, 1, 0);
  V3 fwd = (target - eye).normalized(), right = fwd.cross(up).normalized() * -1.0, cam_up = right.cross(fwd) * -1.0;
  double aspect = static_cast<double>(w) / h, fov = std::tan(0.5 * 0.9);
  std::uint64_t sum = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      V3 acc;
      for (int sy = 0; sy < samples; ++sy)
        for (int sx = 0; sx < samples; ++sx) {
          double u = (2 * ((x + (sx + 0.5) / samples) / w) - 1) * aspect * fov;
          double v = (1 - 2 * ((y + (sy + 0.5) / samples) / h)) * fov;
          rt::Ray ray{eye, (fwd + right * u + cam_up * v).normalized()};
          acc = acc + scene.shade(ray, 3);
        }
      acc = acc * (1.0 / (samples * samples));
      std::uint8_t *px = rgb + 3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x));
      px[0] = rt::to_byte(acc.x);
      px[1] = rt::to_byte(acc.y);
      px[2] = rt::to_byte(acc.z);
      sum = sum * 1000003u + px[0] + (static_cast<std::uint64_t>(px[1]) << 8) + (static_cast<std::uint64_t>(px[2]) << 16);
    }
  return sum;
}
