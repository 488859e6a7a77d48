#include "ir/Specialize.h"
#include "support/Quote.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

namespace tk {

ConstValue ConstValue::ofBool(bool v) {
  ConstValue c;
  c.kind = Kind::Bool;
  c.boolValue = v;
  return c;
}
ConstValue ConstValue::ofInt(int64_t v) {
  ConstValue c;
  c.kind = Kind::Int;
  c.intValue = v;
  return c;
}
ConstValue ConstValue::ofFloat(double v) {
  ConstValue c;
  c.kind = Kind::Float;
  c.floatValue = v;
  return c;
}
ConstValue ConstValue::ofString(std::string v) {
  ConstValue c;
  c.kind = Kind::String;
  c.stringValue = std::move(v);
  return c;
}
ConstValue ConstValue::ofDType(DType v) {
  ConstValue c;
  c.kind = Kind::DType;
  c.dtype = v;
  return c;
}

ConstValue ConstValue::ofFunction(std::string name) {
  ConstValue c;
  c.kind = Kind::Function;
  c.stringValue = std::move(name);
  return c;
}

ConstValue ConstValue::ofBuiltin(std::string name) {
  ConstValue c;
  c.kind = Kind::Builtin;
  c.stringValue = std::move(name);
  return c;
}

ConstValue ConstValue::ofTuple(std::vector<ConstValue> elements) {
  ConstValue c;
  c.kind = Kind::Tuple;
  c.elements = std::move(elements);
  return c;
}

std::string ConstValue::str() const {
  switch (kind) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return boolValue ? "True" : "False";
  case Kind::Int:
    return std::to_string(intValue);
  case Kind::Float:
    if (std::isnan(floatValue))
      return "nan";
    if (std::isinf(floatValue))
      return floatValue > 0 ? "inf" : "-inf";
    return fmt::format("{}", floatValue);
  case Kind::String:
    return "'" + stringValue + "'";
  case Kind::DType:
    return "tk." + std::string(dtypePythonName(dtype));
  case Kind::Function:
    return stringValue;
  case Kind::Builtin:
    return "tk." + stringValue;
  case Kind::Tuple: {
    std::string out = "(";
    for (size_t i = 0; i < elements.size(); ++i)
      out += (i ? ", " : "") + elements[i].str();
    return out + (elements.size() == 1 ? ",)" : ")");
  }
  }
  return "?";
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::optional<int64_t> parseInt(std::string_view s) {
  std::string text(s);
  if (text.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0' || end == text.c_str())
    return std::nullopt;
  // strtoll with base 0 reads "010" as octal; Python rejects it, and so do we.
  std::string_view digits = s.front() == '-' ? s.substr(1) : s;
  if (digits.size() > 1 && digits[0] == '0' && digits[1] != 'x' && digits[1] != 'X')
    return std::nullopt;
  return v;
}

std::optional<double> parseFloat(std::string_view s) {
  std::string text(s);
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || end == text.c_str())
    return std::nullopt;
  return v;
}

std::optional<DType> parseAnyDType(std::string_view s) {
  if (s.substr(0, 3) == "tk.")
    s.remove_prefix(3);
  if (auto d = parseDTypeName(s))
    return d;
  return parseDTypePythonName(s);
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The end of the signature entry starting at `start`: the next comma outside
// brackets ("tensordesc<fp16[64,64]>" is one entry), or npos.
size_t entryEnd(std::string_view text, size_t start) {
  int depth = 0;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<' || c == '[' || c == '(' || c == '{')
      ++depth;
    else if ((c == '>' || c == ']' || c == ')' || c == '}') && depth > 0)
      --depth;
    else if (c == ',' && depth == 0)
      return i;
  }
  return std::string_view::npos;
}

// A comma-separated list of powers of two ("64,32") into `out`; the item
// that is not one otherwise.
std::optional<std::string_view> parsePowersOfTwo(std::string_view list, std::vector<int64_t> &out) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    std::optional<int64_t> v = parseInt(item);
    if (!v || !isPowerOfTwo(*v))
      return item;
    out.push_back(*v);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return std::nullopt;
}

// "tensordesc<DTYPE[B0,B1,...]{D0,D1,...},PADDING>" into `e`, the sizes'
// divisibilities {...} and the padding optional; the reason it is malformed
// otherwise.
std::string parseDescriptorEntry(std::string_view item, SignatureEntry &e) {
  const std::string_view form =
      "expected tensordesc<DTYPE[BLOCK,...]>, optionally with the sizes' divisibility "
      "({16,1}) after the block shape, then ',nan' and ',tma' before the '>'";
  std::string_view body = item.substr(std::string_view("tensordesc<").size());
  if (body.empty() || body.back() != '>')
    return std::string(form);
  body.remove_suffix(1);
  size_t open = body.find('['), close = body.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::string(form);
  std::optional<DType> d = parseDTypeName(trim(body.substr(0, open)));
  if (!d)
    return fmt::format("unknown dtype '{}'", showText(trim(body.substr(0, open))));
  e.kind = SignatureEntry::Kind::Descriptor;
  e.dtype = *d;
  if (auto bad = parsePowersOfTwo(body.substr(open + 1, close - open - 1), e.blockShape))
    return fmt::format("the block shape must be powers of two, not '{}'", showText(*bad));
  if (e.blockShape.empty() || e.blockShape.size() > 5)
    return fmt::format("a descriptor has 1 to 5 dimensions, not {}", e.blockShape.size());
  std::string_view rest = trim(body.substr(close + 1));
  if (!rest.empty() && rest.front() == '{') {
    size_t end = rest.find('}');
    if (end == std::string_view::npos)
      return std::string(form);
    if (auto bad = parsePowersOfTwo(rest.substr(1, end - 1), e.shapeDivisibility))
      return fmt::format("the sizes' divisibility must be powers of two, not '{}'", showText(*bad));
    if (e.shapeDivisibility.size() != e.blockShape.size())
      return fmt::format("{} sizes' divisibilities for a {}-D block shape",
                         e.shapeDivisibility.size(), e.blockShape.size());
    rest = trim(rest.substr(end + 1));
  }
  while (!rest.empty()) {
    if (rest.front() != ',')
      return std::string(form);
    rest = trim(rest.substr(1));
    size_t comma = rest.find(',');
    std::string_view word = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma);
    if (word == "tma" && !e.tma) {
      e.tma = true;
      continue;
    }
    if (e.tma)
      return fmt::format("',tma' comes last, not before '{}'", showText(word));
    if (word != "zero" && word != "nan")
      return fmt::format("the padding must be zero or nan, not '{}'", showText(word));
    e.padding = std::string(word);
  }
  return "";
}

// The value of a default written as a literal: 128, -1, 0.5, True, None,
// 'x', tk.float16. Anything else is not a compile-time value we can read
// without lowering, so the caller reports it.
std::optional<ConstValue> literalValue(const ast::Expr *e) {
  using namespace ast;
  if (auto *i = dyn_cast<IntLit>(e))
    return i->value > uint64_t(INT64_MAX) ? std::nullopt
                                          : std::optional(ConstValue::ofInt(int64_t(i->value)));
  if (auto *f = dyn_cast<FloatLit>(e))
    return ConstValue::ofFloat(f->value);
  if (auto *b = dyn_cast<BoolLit>(e))
    return ConstValue::ofBool(b->value);
  if (isa<NoneLit>(e))
    return ConstValue::none();
  if (auto *s = dyn_cast<StringLit>(e))
    return ConstValue::ofString(s->value);
  if (auto *u = dyn_cast<Unary>(e); u && u->op == UnaryOp::Neg) {
    std::optional<ConstValue> v = literalValue(u->operand);
    if (v && v->kind == ConstValue::Kind::Int)
      return ConstValue::ofInt(-v->intValue);
    if (v && v->kind == ConstValue::Kind::Float)
      return ConstValue::ofFloat(-v->floatValue);
    return std::nullopt;
  }
  if (auto *a = dyn_cast<Attribute>(e))
    if (isa<Name>(a->value))
      if (auto d = parseDTypePythonName(a->attr))
        return ConstValue::ofDType(*d);
  return std::nullopt;
}

// Whether an annotation names tk's `marker` (`p: tk.const`, or `const`
// imported from tk).
bool isAnnotation(const ast::Expr *e, std::string_view marker) {
  if (auto *a = ast::dyn_cast<ast::Attribute>(e))
    return a->attr == marker;
  if (auto *n = ast::dyn_cast<ast::Name>(e))
    return n->id == marker;
  return false;
}

bool isConstAnnotation(const ast::Expr *e) { return isAnnotation(e, "const"); }
bool isConstexprAnnotation(const ast::Expr *e) { return isAnnotation(e, "constexpr"); }

} // namespace

// The names listed in `@tk.jit(do_not_specialize=[...])`, by name or by
// parameter index, as Triton accepts both.
std::set<std::string> decoratorDoNotSpecialize(const ast::FunctionDef &fn) {
  std::set<std::string> names;
  for (const ast::Expr *d : fn.decorators) {
    auto *call = ast::dyn_cast<ast::Call>(d);
    if (!call)
      continue;
    for (const ast::Keyword &k : call->keywords) {
      if (k.name != "do_not_specialize")
        continue;
      std::vector<ast::Expr *> elts;
      if (auto *l = ast::dyn_cast<ast::List>(k.value))
        elts = l->elts;
      else if (auto *t = ast::dyn_cast<ast::Tuple>(k.value))
        elts = t->elts;
      for (const ast::Expr *e : elts) {
        if (auto *s = ast::dyn_cast<ast::StringLit>(e))
          names.insert(s->value);
        else if (auto *i = ast::dyn_cast<ast::IntLit>(e); i && i->value < fn.params.size())
          names.insert(fn.params[i->value].name);
      }
    }
  }
  return names;
}

ConstValue parseConstValue(std::string_view text) {
  std::string_view s = trim(text);
  if (s == "True" || s == "False")
    return ConstValue::ofBool(s == "True");
  if (s == "None")
    return ConstValue::none();
  if (auto i = parseInt(s))
    return ConstValue::ofInt(*i);
  if (auto f = parseFloat(s))
    return ConstValue::ofFloat(*f);
  if (auto d = parseAnyDType(s))
    return ConstValue::ofDType(*d);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    return ConstValue::ofString(std::string(s.substr(1, s.size() - 2)));
  return ConstValue::ofString(std::string(s));
}

std::optional<std::vector<SignatureEntry>> parseSignature(std::string_view text, SourceLoc loc,
                                                          DiagnosticEngine &diag) {
  std::vector<SignatureEntry> entries;
  if (trim(text).empty())
    return entries;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = entryEnd(text, start);
    std::string_view item = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    auto bad = [&](std::string why) {
      // The entry as text the terminal shows whole (a control byte as \xNN).
      diag.error(loc, fmt::format("invalid signature entry '{}' (#{}): {}", showText(item),
                                  entries.size() + 1, why));
      return std::nullopt;
    };
    if (item.empty())
      return bad("empty; entries are separated by single commas");
    SignatureEntry e;
    if (item.starts_with("tensordesc<")) {
      if (std::string why = parseDescriptorEntry(item, e); !why.empty())
        return bad(why);
      entries.push_back(std::move(e));
      continue;
    }
    std::string_view typeText = item;
    if (item.front() == '*') {
      e.kind = SignatureEntry::Kind::Pointer;
      typeText.remove_prefix(1);
    }
    std::string_view base = typeText, divText;
    if (size_t colon = typeText.find(':'); colon != std::string_view::npos) {
      base = typeText.substr(0, colon);
      divText = typeText.substr(colon + 1);
    }
    if (std::optional<DType> d = parseSignatureDTypeName(base)) {
      e.dtype = *d;
      if (!divText.empty() || typeText.find(':') != std::string_view::npos) {
        std::optional<int64_t> div = parseInt(divText);
        if (!div || !isPowerOfTwo(*div))
          return bad(fmt::format("the divisibility after ':' must be a power of two such as 16, "
                                 "not '{}'",
                                 divText));
        e.divisibility = *div;
        e.equalsOne =
            *div == 1 && e.kind == SignatureEntry::Kind::Scalar && isInteger(*d) && *d != DType::I1;
      }
    } else if (e.kind == SignatureEntry::Kind::Pointer) {
      return bad(fmt::format("unknown dtype '{}'", showText(base)));
    } else {
      // Not a type: a constant, as Triton's AOT signatures write constexprs.
      e.kind = SignatureEntry::Kind::Constant;
      e.constant = parseConstValue(item);
      if (e.constant.kind == ConstValue::Kind::String &&
          !(item.front() == '\'' || item.front() == '"'))
        return bad("expected a type such as \"*fp32:16\" or \"i32\", or a constant");
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

bool specializeParams(const ast::FunctionDef &fn, const KernelSpec &spec, DiagnosticEngine &diag,
                      std::vector<ParamBinding> &out) {
  std::optional<std::vector<SignatureEntry>> sig = parseSignature(spec.signature, fn.nameLoc, diag);
  if (!sig)
    return false;

  std::set<std::string> noSpec = decoratorDoNotSpecialize(fn);
  noSpec.insert(spec.doNotSpecialize.begin(), spec.doNotSpecialize.end());

  // A signature names every parameter, or (Triton's AOT form without the
  // constexprs) every parameter that is not a constexpr.
  std::vector<int> sigIndex(fn.params.size(), -1);
  if (!sig->empty()) {
    size_t numRuntime = 0;
    for (const ast::Param &p : fn.params)
      numRuntime += !isConstexprAnnotation(p.annotation);
    if (sig->size() == fn.params.size()) {
      for (size_t i = 0; i < fn.params.size(); ++i)
        sigIndex[i] = int(i);
    } else if (sig->size() == numRuntime) {
      int next = 0;
      for (size_t i = 0; i < fn.params.size(); ++i)
        if (!isConstexprAnnotation(fn.params[i].annotation))
          sigIndex[i] = next++;
    } else {
      diag.error(fn.nameLoc, fmt::format("the signature has {} entries but '{}' has {} parameters "
                                         "({} without tk.constexpr)",
                                         sig->size(), fn.name, fn.params.size(), numRuntime));
      return false;
    }
  }

  bool ok = true;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ast::Param &p = fn.params[i];
    ParamBinding b;
    b.name = p.name;
    b.loc = p.loc;
    bool constexprParam = isConstexprAnnotation(p.annotation);

    std::optional<SignatureEntry> entry;
    if (sigIndex[i] >= 0)
      entry = (*sig)[sigIndex[i]];
    else if (auto *s = ast::dyn_cast<ast::StringLit>(p.annotation)) {
      // The checks validated the annotation; one entry, or an error here.
      std::optional<std::vector<SignatureEntry>> one =
          parseSignature(s->value, p.annotation->loc, diag);
      if (!one || one->size() != 1) {
        ok = false;
        continue;
      }
      entry = one->front();
    }

    auto given = spec.constants.find(p.name);
    if (given != spec.constants.end() &&
        (constexprParam || !entry || entry->kind == SignatureEntry::Kind::Constant)) {
      // -D names the value of a constexpr (or of a parameter with no type).
      b.isConstant = true;
      b.value = given->second;
    } else if (entry && entry->kind == SignatureEntry::Kind::Constant) {
      b.isConstant = true;
      b.value = entry->constant;
    } else if (entry && entry->kind == SignatureEntry::Kind::Descriptor) {
      // 2R IR arguments (the header): the base, the sizes, the strides but
      // the last. The base's and strides' facts are the host side's checks,
      // not specialisation, so do_not_specialize drops only the sizes'.
      size_t rank = entry->blockShape.size();
      int64_t strideDiv = std::max<int64_t>(1, 16 / dtypeBytes(entry->dtype));
      for (size_t part = 0; part < 2 * rank + (entry->tma ? 1 : 0); ++part) {
        ParamBinding leaf = b;
        leaf.isArgument = true;
        leaf.descriptorPart = int(part);
        leaf.descriptorParam = p.name;
        leaf.descriptorDType = entry->dtype;
        leaf.blockShape = entry->blockShape;
        leaf.padding = entry->padding;
        leaf.tma = entry->tma;
        if (part == 2 * rank) {
          leaf.name = fmt::format("{}.tensormap", p.name);
          leaf.isPointer = true;
          leaf.dtype = DType::I8;
        } else if (part == 0) {
          leaf.isPointer = true;
          leaf.dtype = entry->dtype;
          leaf.divisibility = 16;
        } else if (part <= rank) {
          leaf.name = fmt::format("{}.shape[{}]", p.name, part - 1);
          leaf.dtype = DType::I32;
          if (!entry->shapeDivisibility.empty() && !noSpec.count(p.name))
            leaf.divisibility = entry->shapeDivisibility[part - 1];
        } else {
          leaf.name = fmt::format("{}.strides[{}]", p.name, part - rank - 1);
          leaf.dtype = DType::I64;
          leaf.divisibility = strideDiv;
        }
        out.push_back(std::move(leaf));
      }
      continue;
    } else if (entry) {
      bool specialize = !noSpec.count(p.name);
      b.isArgument = true;
      b.isPointer = entry->kind == SignatureEntry::Kind::Pointer;
      b.isConst = b.isPointer && p.annotation && isConstAnnotation(p.annotation);
      b.dtype = entry->dtype;
      if (specialize && entry->divisibility > 1)
        b.divisibility = entry->divisibility;
      // "i32:1" is Triton's spelling of "equal to 1": uses of the parameter see
      // the constant 1, and the argument stays so the launch ABI does not change.
      if (specialize && entry->equalsOne) {
        b.isConstant = true;
        b.value = ConstValue::ofInt(1);
      }
    } else if (constexprParam && p.defaultValue) {
      std::optional<ConstValue> v = literalValue(p.defaultValue);
      if (!v) {
        diag.error(p.defaultValue->loc,
                   fmt::format("not supported yet: the default of constexpr '{}' must be a literal "
                               "(pass its value with -D {}=VALUE)",
                               p.name, p.name));
        ok = false;
        continue;
      }
      b.isConstant = true;
      b.value = *v;
    } else if (constexprParam) {
      diag.error(p.loc, fmt::format("constexpr parameter '{}' of '{}' has no value: pass it with "
                                    "-D {}=VALUE or in the signature",
                                    p.name, fn.name, p.name));
      ok = false;
      continue;
    } else {
      diag.error(p.loc, fmt::format("parameter '{}' of '{}' has no type: annotate it (\"*fp32\", "
                                    "\"i32\") or pass a signature such as --signature "
                                    "\"*fp32:16, i32\"",
                                    p.name, fn.name));
      ok = false;
      continue;
    }
    out.push_back(std::move(b));
  }
  return ok;
}

} // namespace tk
