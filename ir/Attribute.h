// Attributes: the compile-time constants attached to operations and to
// function arguments, and the ordered dictionary that holds them.
//
// An attribute is one of: a 64-bit integer, a double, a string, a bool, a type,
// an integer array, or a layout. Text forms (docs/ir.md):
//
//   {axis = 0, value = 1.5, predicate = "slt", volatile = true,
//    type = fp16, order = [1, 0]}
//
// Integers are stored as 64-bit two's complement whatever the type they
// describe (a u64 constant 2^64-1 prints as -1); floats are doubles, printed
// in the shortest form that reads back to the same bits.
//
// An AttrDict keeps its entries sorted by name, so the same attributes always
// print the same way and two ops with the same attributes compare equal (CSE
// relies on this).
#pragma once

#include "ir/Types.h"

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tk {

class Attribute {
public:
  enum class Kind : uint8_t { Int, Float, String, Bool, Type, IntArray, Layout };

  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Attribute(T v)
      : v_(static_cast<int64_t>(v)) {}
  Attribute(double v) : v_(v) {}
  Attribute(std::string v) : v_(std::move(v)) {}
  Attribute(const char *v) : v_(std::string(v)) {}
  Attribute(bool v) : v_(v) {}
  Attribute(Type *v) : v_(v) {}
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attribute(const LayoutAttr *v) : v_(v) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool isInt() const { return kind() == Kind::Int; }
  bool isFloat() const { return kind() == Kind::Float; }
  bool isString() const { return kind() == Kind::String; }
  bool isBool() const { return kind() == Kind::Bool; }
  bool isType() const { return kind() == Kind::Type; }
  bool isIntArray() const { return kind() == Kind::IntArray; }
  bool isLayout() const { return kind() == Kind::Layout; }

  int64_t getInt() const { return std::get<int64_t>(v_); }
  double getFloat() const { return std::get<double>(v_); }
  const std::string &getString() const { return std::get<std::string>(v_); }
  bool getBool() const { return std::get<bool>(v_); }
  Type *getType() const { return std::get<Type *>(v_); }
  const std::vector<int64_t> &getIntArray() const { return std::get<std::vector<int64_t>>(v_); }
  const LayoutAttr *getLayout() const { return std::get<const LayoutAttr *>(v_); }

  /// Equality compares floats by their bits, so 0.0 != -0.0 and NaN == NaN:
  /// what matters is whether two ops compute the same thing.
  bool operator==(const Attribute &other) const;
  bool operator<(const Attribute &other) const;

  /// The text form used by the printer.
  std::string str() const;

private:
  std::variant<int64_t, double, std::string, bool, Type *, std::vector<int64_t>, const LayoutAttr *>
      v_;
};

/// Kind names as the verifier reports them: "int", "float", "string", ...
std::string_view attrKindName(Attribute::Kind k);

/// Shortest text of a double that reads back to the same value; always has a
/// '.', an exponent, or is one of inf, -inf, nan, so it never reads as an int.
std::string formatDouble(double v);

class AttrDict {
public:
  using Entry = std::pair<std::string, Attribute>;

  /// Sets (or replaces) an entry, keeping the names sorted.
  void set(std::string_view name, Attribute value);
  /// Removes an entry; returns whether it was there.
  bool erase(std::string_view name);
  const Attribute *get(std::string_view name) const;
  bool has(std::string_view name) const { return get(name) != nullptr; }

  /// Typed getters: nullopt when absent or of another kind.
  std::optional<int64_t> getInt(std::string_view name) const;
  std::optional<double> getFloat(std::string_view name) const;
  std::optional<std::string> getString(std::string_view name) const;
  std::optional<bool> getBool(std::string_view name) const;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

  bool operator==(const AttrDict &o) const { return entries_ == o.entries_; }
  bool operator<(const AttrDict &o) const { return entries_ < o.entries_; }

  /// `{a = 1, b = "x"}`, or empty text for an empty dictionary.
  std::string str() const;

private:
  std::vector<Entry> entries_;
};

} // namespace tk
