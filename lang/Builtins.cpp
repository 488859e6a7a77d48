#include "lang/Builtins.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace tk {
namespace {

// Splits a signature at its top-level commas. Defaults may hold brackets and
// quoted strings ("boundary_check=()", "sep=' '"), which must not split.
std::vector<std::string_view> splitParams(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  assert(depth == 0 && !quote && "unbalanced signature in Builtins.def");
  if (start < text.size())
    out.push_back(text.substr(start));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

struct RawBuiltin {
  BuiltinId id;
  std::string_view name;
  BuiltinKind kind;
  BuiltinScope scope;
  std::string_view signature;
  std::string_view summary;
};

constexpr RawBuiltin kRawBuiltins[] = {
#define TK_BUILTIN(ENUM, NAME, KIND, SIGNATURE, SUMMARY)                                           \
  {BuiltinId::ENUM, NAME, BuiltinKind::KIND, BuiltinScope::Tk, SIGNATURE, SUMMARY},
#define TK_UNSUPPORTED(ENUM, NAME, HINT)                                                           \
  {BuiltinId::ENUM, NAME, BuiltinKind::Unsupported, BuiltinScope::Tk, "", HINT},
#define TK_PYTHON_BUILTIN(ENUM, NAME, KIND, SIGNATURE, SUMMARY)                                    \
  {BuiltinId::ENUM, NAME, BuiltinKind::KIND, BuiltinScope::Python, SIGNATURE, SUMMARY},
#define TK_PYTHON_UNSUPPORTED(ENUM, NAME, HINT)                                                    \
  {BuiltinId::ENUM, NAME, BuiltinKind::Unsupported, BuiltinScope::Python, "", HINT},
#include "lang/Builtins.def"
};

struct RawDType {
  BuiltinId longId, shortId;
  DType dtype;
  std::string_view pyName, irName;
};

constexpr RawDType kRawDTypes[] = {
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND)                                                 \
  {BuiltinId::DType##ENUM, BuiltinId::DTypeShort##ENUM, DType::ENUM, PYNAME, IRNAME},
#include "lang/DTypes.def"
};

// libdevice.NAME: Triton names the arguments arg0, arg1, ...
constexpr std::string_view kLibdeviceSignatures[] = {"", "arg0", "arg0, arg1", "arg0, arg1, arg2",
                                                     "arg0, arg1, arg2, arg3"};

struct RawLibdevice {
  BuiltinId id;
  std::string_view name; // "libdevice.asin"
  unsigned arity;
  std::string_view summary;
};

constexpr RawLibdevice kRawLibdevice[] = {
#define TK_LIBDEVICE(ENUM, NAME, ARITY, SUMMARY)                                                   \
  {BuiltinId::Libdevice##ENUM, "libdevice." NAME, ARITY, SUMMARY},
#include "lang/Libdevice.def"
};

struct RawMember {
  TensorMemberId id;
  std::string_view name;
  MemberKind kind;
  std::string_view signature;
  std::string_view summary;
};

constexpr RawMember kRawMembers[] = {
#define TK_TENSOR_MEMBER(ENUM, NAME, KIND, SIGNATURE, SUMMARY)                                     \
  {TensorMemberId::ENUM, NAME, MemberKind::KIND, SIGNATURE, SUMMARY},
#include "lang/Builtins.def"
};

constexpr EnumMemberInfo kEnumMembers[] = {
#define TK_ENUM_MEMBER(OWNER, NAME, VALUE, SUMMARY) {BuiltinId::OWNER, NAME, VALUE, SUMMARY},
#include "lang/Builtins.def"
};

// The tables are built on first use (a function-local static, so there is no
// static constructor and the build is thread-safe), in enum order, so an
// index is the enum value.
struct Tables {
  std::vector<BuiltinInfo> builtins;
  std::vector<TensorMemberInfo> members;
  std::map<std::string_view, BuiltinId> tkByName, pythonByName;
  std::map<std::string_view, TensorMemberId> memberByName;
};

const Tables &tables() {
  static const Tables t = [] {
    Tables t;
    for (const RawBuiltin &r : kRawBuiltins) {
      assert(static_cast<size_t>(r.id) == t.builtins.size());
      t.builtins.push_back({r.id, r.name, r.kind, r.scope, r.signature, r.summary,
                            Signature::parse(r.signature), std::nullopt});
    }
    for (const RawDType &r : kRawDTypes) {
      assert(static_cast<size_t>(r.longId) == t.builtins.size());
      t.builtins.push_back({r.longId, r.pyName, BuiltinKind::DType, BuiltinScope::Tk, "", "a dtype",
                            Signature{}, r.dtype});
      t.builtins.push_back({r.shortId, r.irName, BuiltinKind::DType, BuiltinScope::Tk, "",
                            "a dtype", Signature{}, r.dtype});
    }
    for (const RawLibdevice &r : kRawLibdevice) {
      assert(static_cast<size_t>(r.id) == t.builtins.size());
      std::string_view sig = kLibdeviceSignatures[r.arity];
      t.builtins.push_back({r.id, r.name, BuiltinKind::Function, BuiltinScope::Tk, sig, r.summary,
                            Signature::parse(sig), std::nullopt});
    }
    for (const BuiltinInfo &b : t.builtins) {
      auto &byName = b.scope == BuiltinScope::Tk ? t.tkByName : t.pythonByName;
      [[maybe_unused]] bool inserted = byName.emplace(b.name, b.id).second;
      assert(inserted && "duplicate builtin name");
    }
    for (const RawMember &r : kRawMembers) {
      assert(static_cast<size_t>(r.id) == t.members.size());
      t.members.push_back(
          {r.id, r.name, r.kind, r.signature, r.summary, Signature::parse(r.signature)});
      [[maybe_unused]] bool inserted = t.memberByName.emplace(r.name, r.id).second;
      assert(inserted && "duplicate tensor member name");
    }
    return t;
  }();
  return t;
}

std::string formatParams(const Signature &sig) {
  std::string out;
  bool sawStar = false;
  for (const ParamSpec &p : sig.params) {
    if (!out.empty())
      out += ", ";
    if (p.keywordOnly && !sawStar) {
      out += "*, ";
      sawStar = true;
    }
    if (p.variadic) {
      out += "*";
      sawStar = true;
    }
    out += p.name;
    if (p.hasDefault)
      out += "=" + p.defaultText;
  }
  return out;
}

} // namespace

unsigned Signature::minPositional() const {
  unsigned n = 0;
  for (const ParamSpec &p : params) {
    if (p.hasDefault || p.variadic || p.keywordOnly)
      break;
    ++n;
  }
  return n;
}

unsigned Signature::maxPositional() const {
  unsigned n = 0;
  for (const ParamSpec &p : params) {
    if (p.variadic || p.keywordOnly)
      break;
    ++n;
  }
  return n;
}

bool Signature::isVariadic() const {
  for (const ParamSpec &p : params)
    if (p.variadic)
      return true;
  return false;
}

const ParamSpec *Signature::findKeyword(std::string_view name) const {
  for (const ParamSpec &p : params)
    if (!p.variadic && p.name == name)
      return &p;
  return nullptr;
}

Signature Signature::parse(std::string_view text) {
  Signature sig;
  bool keywordOnly = false;
  for (std::string_view piece : splitParams(text)) {
    piece = trim(piece);
    assert(!piece.empty() && "empty parameter in signature");
    if (piece == "*") {
      keywordOnly = true;
      continue;
    }
    ParamSpec p;
    p.keywordOnly = keywordOnly;
    if (piece.front() == '*') {
      p.variadic = true;
      p.keywordOnly = false;
      piece.remove_prefix(1);
      keywordOnly = true;
    }
    if (size_t eq = piece.find('='); eq != std::string_view::npos) {
      p.hasDefault = true;
      p.defaultText = std::string(trim(piece.substr(eq + 1)));
      piece = trim(piece.substr(0, eq));
    }
    p.name = std::string(piece);
    sig.params.push_back(std::move(p));
  }
  return sig;
}

bool BuiltinInfo::isCallable() const {
  switch (kind) {
  case BuiltinKind::DType:
  case BuiltinKind::Unsupported:
  case BuiltinKind::Enum:
  case BuiltinKind::Namespace:
    return false;
  case BuiltinKind::TypeMarker:
    return id == BuiltinId::Constexpr;
  default:
    return true;
  }
}

std::span<const BuiltinInfo> allBuiltins() { return tables().builtins; }

const BuiltinInfo &builtinInfo(BuiltinId id) { return tables().builtins[static_cast<size_t>(id)]; }

const BuiltinInfo &builtinInfo(int index) {
  assert(index >= 0 && static_cast<size_t>(index) < tables().builtins.size());
  return tables().builtins[static_cast<size_t>(index)];
}

std::optional<BuiltinId> lookupTkBuiltin(std::string_view name) {
  const auto &m = tables().tkByName;
  if (auto it = m.find(name); it != m.end())
    return it->second;
  return std::nullopt;
}

std::optional<BuiltinId> lookupPythonBuiltin(std::string_view name) {
  const auto &m = tables().pythonByName;
  if (auto it = m.find(name); it != m.end())
    return it->second;
  return std::nullopt;
}

namespace {

// Triton's triton.language.math names that tk has at top level.
bool isTritonMathName(std::string_view name) {
  static constexpr std::string_view names[] = {"abs",   "ceil", "cos",   "div_rn",  "erf",   "exp",
                                               "exp2",  "fdiv", "floor", "fma",     "log",   "log2",
                                               "rsqrt", "sin",  "sqrt",  "sqrt_rn", "umulhi"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

} // namespace

std::optional<BuiltinId> lookupNamespaceMember(BuiltinId ns, std::string_view attr) {
  std::string name(attr);
  switch (ns) {
  case BuiltinId::Language:
    return lookupTkBuiltin(attr);
  case BuiltinId::Math:
    if (isTritonMathName(attr))
      return lookupTkBuiltin(attr);
    return lookupTkBuiltin("math." + name);
  case BuiltinId::Core:
  case BuiltinId::Standard:
    // The namespace's own helpers (core.get_int_dtype), else tk's names
    // (Triton's core and standard modules hold the builtins too).
    if (auto id = lookupTkBuiltin(std::string(builtinInfo(ns).name) + "." + name))
      return id;
    return lookupTkBuiltin(attr);
  case BuiltinId::Extra:
  case BuiltinId::ExtraCuda:
    // A nested namespace (extra.cuda, extra.cuda.libdevice), else a function
    // of the namespace (cuda.NAME).
    if (auto id = lookupTkBuiltin(std::string(builtinInfo(ns).name) + "." + name))
      return id;
    return ns == BuiltinId::ExtraCuda ? lookupTkBuiltin("cuda." + name) : std::nullopt;
  case BuiltinId::ExtraLibdevice:
  case BuiltinId::ExtraCudaLibdevice:
    return lookupTkBuiltin("libdevice." + name);
  default:
    return std::nullopt;
  }
}

std::optional<BuiltinId> lookupModulePath(std::string_view path, bool &isRoot) {
  isRoot = false;
  if (path != "tk" && path.substr(0, 3) != "tk.")
    return std::nullopt;
  path.remove_prefix(2);
  // tk.language.X is tk.X: Triton's module tree, with tk as triton.language.
  if (path == ".language" || path.substr(0, 10) == ".language.")
    path.remove_prefix(9);
  if (path.empty()) {
    isRoot = true;
    return std::nullopt;
  }
  std::optional<BuiltinId> ns;
  size_t start = 1;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string_view part = path.substr(start, dot == std::string_view::npos ? dot : dot - start);
    ns = ns ? lookupNamespaceMember(*ns, part) : lookupTkBuiltin(part);
    if (!ns || builtinInfo(*ns).kind != BuiltinKind::Namespace || *ns == BuiltinId::Language)
      return std::nullopt;
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  return ns;
}

std::string qualifiedName(const BuiltinInfo &info) {
  // A function of a namespace (libdevice.asin) keeps its namespace's short
  // name; namespaces are under tk (tk.extra.libdevice).
  if (info.kind != BuiltinKind::Namespace && info.name.find('.') != std::string_view::npos)
    return std::string(info.name);
  std::string out = info.scope == BuiltinScope::Tk ? "tk." : "";
  out += info.name;
  return out;
}

std::string formatSignature(const BuiltinInfo &info) {
  if (!info.isCallable())
    return qualifiedName(info);
  std::string out = qualifiedName(info);
  out += '(';
  out += formatParams(info.signature);
  out += ')';
  return out;
}

std::span<const TensorMemberInfo> allTensorMembers() { return tables().members; }

const TensorMemberInfo &tensorMemberInfo(TensorMemberId id) {
  return tables().members[static_cast<size_t>(id)];
}

std::optional<TensorMemberId> lookupTensorMember(std::string_view name) {
  const auto &m = tables().memberByName;
  if (auto it = m.find(name); it != m.end())
    return it->second;
  return std::nullopt;
}

std::string formatSignature(const TensorMemberInfo &info) {
  std::string out = "x.";
  out += info.name;
  if (info.kind == MemberKind::Method) {
    out += '(';
    out += formatParams(info.signature);
    out += ')';
  }
  return out;
}

std::span<const EnumMemberInfo> allEnumMembers() { return kEnumMembers; }

const EnumMemberInfo *lookupEnumMember(BuiltinId owner, std::string_view name) {
  for (const EnumMemberInfo &m : kEnumMembers)
    if (m.owner == owner && m.name == name)
      return &m;
  return nullptr;
}

std::vector<const EnumMemberInfo *> enumMembers(BuiltinId owner) {
  std::vector<const EnumMemberInfo *> out;
  for (const EnumMemberInfo &m : kEnumMembers)
    if (m.owner == owner)
      out.push_back(&m);
  return out;
}

std::string qualifiedName(const EnumMemberInfo &info) {
  return qualifiedName(builtinInfo(info.owner)) + "." + std::string(info.name);
}

} // namespace tk
