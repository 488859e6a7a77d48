// Builtins: the table of every name tk gives a kernel for free.
//
// Three kinds of names, one table each, all generated from lang/Builtins.def:
//
//   - tk's own names, reached as `tk.load` (or `tl.load` after `import tk as
//     tl`, or `load` after `from tk import load`), including one entry per
//     spelling of every dtype (`tk.float16` and `tk.fp16` are two entries for
//     DType::F16);
//   - the Python builtins a kernel may call (`range`, `min`, `float`, ...);
//   - the methods and properties of tensors and dtypes (`x.to(...)`,
//     `x.shape`, `x_ptr.dtype.element_ty`).
//
// The first two share one index space, BuiltinId, which is what the semantic
// checks store in ast::Name::builtin and ast::Attribute::builtin. Each entry
// carries its Triton-compatible signature, so the checks can bind a call's
// arguments the way Python would:
//
//   const BuiltinInfo &load = builtinInfo(*lookupTkBuiltin("load"));
//   load.signature.params[1].name == "mask";   // optional: hasDefault
//   load.signature.minPositional() == 1;       // pointer
//   load.signature.maxPositional() == 8;
//   formatSignature(load) == "tk.load(pointer, mask=None, other=None, ...)";
//
//   const BuiltinInfo &reshape = builtinInfo(BuiltinId::Reshape);
//   reshape.signature.isVariadic();            // reshape(x, 32, 32)
//
// Names Triton has and tk does not yet (tk.make_block_ptr, fp8 dtypes, ...)
// are entries of kind Unsupported whose `summary` says what to do instead, so
// a ported kernel gets a precise message rather than "no attribute".
#pragma once

#include "lang/DType.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

enum class BuiltinKind : uint8_t {
  Function,    // called inside kernels: tk.load, min, ...
  Iterator,    // the iterable of a `for`: range, tk.range, tk.static_range
  DType,       // tk.float16, tk.i32, ...; not callable
  TypeMarker,  // tk.constexpr (callable: tk.constexpr(128)), tk.tensor, tk.dtype
  Decorator,   // tk.jit, tk.autotune, tk.heuristics
  HostHelper,  // tk.Config, tk.next_power_of_2: host-side, usable on constants
  Enum,        // tk.PropagateNan: not callable; its members (tk.PropagateNan.ALL) are constants
  Namespace,   // tk.math, tk.extra, tk.extra.cuda.libdevice: holds other builtins; not callable
  Unsupported, // a Triton or Python name tk does not support (yet)
};

/// Where a builtin lives: after `tk.` or as a bare Python builtin.
enum class BuiltinScope : uint8_t { Tk, Python };

enum class BuiltinId : uint16_t {
#define TK_BUILTIN(ENUM, NAME, KIND, SIGNATURE, SUMMARY) ENUM,
#define TK_UNSUPPORTED(ENUM, NAME, HINT) ENUM,
#define TK_PYTHON_BUILTIN(ENUM, NAME, KIND, SIGNATURE, SUMMARY) ENUM,
#define TK_PYTHON_UNSUPPORTED(ENUM, NAME, HINT) ENUM,
#include "lang/Builtins.def"
// Two spellings per dtype: the Python name (float16) and the short one (fp16).
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND) DType##ENUM, DTypeShort##ENUM,
#include "lang/DTypes.def"
// One per libdevice function (libdevice.asin: LibdeviceAsin), lang/Libdevice.def.
#define TK_LIBDEVICE(ENUM, NAME, ARITY, SUMMARY) Libdevice##ENUM,
#include "lang/Libdevice.def"
};

/// One parameter of a signature.
struct ParamSpec {
  std::string name;
  std::string defaultText; // the default as written ("None", "0"); empty if required
  bool hasDefault = false;
  bool variadic = false;    // `*shape`
  bool keywordOnly = false; // after `*` or `*shape`
};

/// A Python-style parameter list, used for builtins and for @tk.jit helpers.
struct Signature {
  std::vector<ParamSpec> params;

  /// How many positional arguments a call must pass at least (the leading
  /// parameters without defaults).
  unsigned minPositional() const;
  /// How many positional arguments a call may pass, ignoring a variadic
  /// parameter (see isVariadic).
  unsigned maxPositional() const;
  bool isVariadic() const;
  /// The parameter named `name` that can be passed by keyword, or null.
  const ParamSpec *findKeyword(std::string_view name) const;

  /// Parses "pointer, mask=None, *shape, can_reorder=False". The text comes
  /// from Builtins.def, so malformed text is an assertion failure.
  static Signature parse(std::string_view text);
};

struct BuiltinInfo {
  BuiltinId id;
  std::string_view name;
  BuiltinKind kind;
  BuiltinScope scope;
  std::string_view signatureText; // as written in Builtins.def; empty for dtypes
  /// One line for the docs; for Unsupported entries, what to do instead.
  std::string_view summary;
  Signature signature;
  std::optional<DType> dtype; // for kind DType

  /// Whether `name(...)` is a meaningful call (false for dtypes, tk.tensor).
  bool isCallable() const;
};

/// Every builtin of the tk module and of Python, in BuiltinId order.
std::span<const BuiltinInfo> allBuiltins();
const BuiltinInfo &builtinInfo(BuiltinId id);
/// The entry for a stored index (ast::Name::builtin); `index` must be valid.
const BuiltinInfo &builtinInfo(int index);

/// `tk.NAME`: an entry of scope Tk (possibly Unsupported), or nullopt.
std::optional<BuiltinId> lookupTkBuiltin(std::string_view name);
/// A bare Python builtin name (possibly Unsupported), or nullopt.
std::optional<BuiltinId> lookupPythonBuiltin(std::string_view name);

/// The member `attr` of the namespace builtin `ns` (tk.extra.cuda ->
/// "libdevice" is the namespace tk.extra.cuda.libdevice; its "asin" is the
/// function libdevice.asin), or nullopt. Namespaces hold:
///   tk.language        what tk holds (Triton's triton.language is tk itself)
///   tk.math            the tk functions Triton's math module has (tk.math.exp2 is tk.exp2)
///   tk.extra           cuda and libdevice
///   tk.extra.cuda      libdevice
///   tk.extra.libdevice, tk.extra.cuda.libdevice   the libdevice functions
std::optional<BuiltinId> lookupNamespaceMember(BuiltinId ns, std::string_view attr);
/// The namespace a module path names, for imports: "tk" and "tk.language"
/// are the tk module itself (nullopt with `isRoot` set), "tk.language.extra"
/// or "tk.extra" the namespace tk.extra, ...; nullopt for other paths.
std::optional<BuiltinId> lookupModulePath(std::string_view path, bool &isRoot);

/// "tk.load", "range", "tk.extra.libdevice" or "libdevice.asin": how messages
/// and docs spell the name (a function inside a namespace is spelled with its
/// namespace's short name, as Triton programs call it).
std::string qualifiedName(const BuiltinInfo &info);
/// "tk.load(pointer, mask=None, ...)" as docs/language.md lists it.
std::string formatSignature(const BuiltinInfo &info);

//===----------------------------------------------------------------------===//
// Tensor and dtype members
//===----------------------------------------------------------------------===//

enum class MemberKind : uint8_t { Method, Property };

enum class TensorMemberId : uint16_t {
#define TK_TENSOR_MEMBER(ENUM, NAME, KIND, SIGNATURE, SUMMARY) ENUM,
#include "lang/Builtins.def"
};

struct TensorMemberInfo {
  TensorMemberId id;
  std::string_view name;
  MemberKind kind;
  std::string_view signatureText; // without the receiver
  std::string_view summary;
  Signature signature;
};

std::span<const TensorMemberInfo> allTensorMembers();
const TensorMemberInfo &tensorMemberInfo(TensorMemberId id);
std::optional<TensorMemberId> lookupTensorMember(std::string_view name);
/// "x.to(dtype, fp_downcast_rounding=None, bitcast=False)" or "x.shape".
std::string formatSignature(const TensorMemberInfo &info);

//===----------------------------------------------------------------------===//
// Members of enum builtins: tk.PropagateNan.ALL is the integer 0xFFFF
//===----------------------------------------------------------------------===//

struct EnumMemberInfo {
  BuiltinId owner;
  std::string_view name;
  int64_t value;
  std::string_view summary;
};

std::span<const EnumMemberInfo> allEnumMembers();
/// `tk.OWNER.NAME`, or null when the enum has no such member.
const EnumMemberInfo *lookupEnumMember(BuiltinId owner, std::string_view name);
/// The members of one enum, in table order.
std::vector<const EnumMemberInfo *> enumMembers(BuiltinId owner);
/// "tk.PropagateNan.ALL".
std::string qualifiedName(const EnumMemberInfo &info);

} // namespace tk
