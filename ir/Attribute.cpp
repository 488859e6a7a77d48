#include "ir/Attribute.h"
#include "ir/IRSyntax.h"
#include "support/Quote.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tk {
namespace {

uint64_t bitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

} // namespace

bool Attribute::operator==(const Attribute &o) const {
  if (kind() != o.kind())
    return false;
  if (isFloat())
    return bitsOf(getFloat()) == bitsOf(o.getFloat());
  return v_ == o.v_;
}

bool Attribute::operator<(const Attribute &o) const {
  if (kind() != o.kind())
    return kind() < o.kind();
  if (isFloat())
    return bitsOf(getFloat()) < bitsOf(o.getFloat());
  if (isType()) // order types by their text, not their addresses
    return getType()->str() < o.getType()->str();
  if (isLayout())
    return getLayout()->str() < o.getLayout()->str();
  return v_ < o.v_;
}

std::string formatDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", v); // shortest round-trip form
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

std::string Attribute::str() const {
  switch (kind()) {
  case Kind::Int:
    return std::to_string(getInt());
  case Kind::Float:
    return formatDouble(getFloat());
  case Kind::String:
    return quoteString(getString());
  case Kind::Bool:
    return getBool() ? "true" : "false";
  case Kind::Type:
    return getType()->str();
  case Kind::IntArray:
    return fmt::format("[{}]", fmt::join(getIntArray(), ", "));
  case Kind::Layout:
    return getLayout()->str();
  }
  return "";
}

std::string_view attrKindName(Attribute::Kind k) {
  switch (k) {
  case Attribute::Kind::Int:
    return "int";
  case Attribute::Kind::Float:
    return "float";
  case Attribute::Kind::String:
    return "string";
  case Attribute::Kind::Bool:
    return "bool";
  case Attribute::Kind::Type:
    return "type";
  case Attribute::Kind::IntArray:
    return "ints";
  case Attribute::Kind::Layout:
    return "layout";
  }
  return "?";
}

void AttrDict::set(std::string_view name, Attribute value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry &e, std::string_view n) { return e.first < n; });
  if (it != entries_.end() && it->first == name)
    it->second = std::move(value);
  else
    entries_.insert(it, {std::string(name), std::move(value)});
}

bool AttrDict::erase(std::string_view name) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == name) {
      entries_.erase(it);
      return true;
    }
  return false;
}

const Attribute *AttrDict::get(std::string_view name) const {
  for (const Entry &e : entries_)
    if (e.first == name)
      return &e.second;
  return nullptr;
}

std::optional<int64_t> AttrDict::getInt(std::string_view name) const {
  const Attribute *a = get(name);
  return a && a->isInt() ? std::optional(a->getInt()) : std::nullopt;
}

std::optional<double> AttrDict::getFloat(std::string_view name) const {
  const Attribute *a = get(name);
  return a && a->isFloat() ? std::optional(a->getFloat()) : std::nullopt;
}

std::optional<std::string> AttrDict::getString(std::string_view name) const {
  const Attribute *a = get(name);
  return a && a->isString() ? std::optional(a->getString()) : std::nullopt;
}

std::optional<bool> AttrDict::getBool(std::string_view name) const {
  const Attribute *a = get(name);
  return a && a->isBool() ? std::optional(a->getBool()) : std::nullopt;
}

std::string AttrDict::str() const {
  if (entries_.empty())
    return "";
  std::string out = "{";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i)
      out += ", ";
    const std::string &name = entries_[i].first;
    out += (isIRIdentifier(name) ? name : quoteString(name)) + " = " + entries_[i].second.str();
  }
  return out + "}";
}

} // namespace tk
