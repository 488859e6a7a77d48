// The libdevice table (see Libdevice.h), built from lang/Libdevice.def.
#include "lang/Libdevice.h"

#include <cassert>
#include <initializer_list>
#include <map>

namespace tk {
namespace {

// Libdevice.def writes argument dtypes as bare enum names.
constexpr DType I32 = DType::I32, U32 = DType::U32, I64 = DType::I64, U64 = DType::U64,
                F32 = DType::F32, F64 = DType::F64;

struct RawFunction {
  BuiltinId id;
  std::string_view name;
  unsigned arity;
};

constexpr RawFunction kFunctions[] = {
#define TK_LIBDEVICE(ENUM, NAME, ARITY, SUMMARY) {BuiltinId::Libdevice##ENUM, NAME, ARITY},
#include "lang/Libdevice.def"
};

struct RawOverload {
  BuiltinId function;
  std::string_view symbol;
  DType result;
  std::initializer_list<DType> args;
};

struct Tables {
  std::vector<LibdeviceOverload> overloads;
  std::vector<LibdeviceFunction> functions;
  std::map<BuiltinId, size_t> functionIndex;
  std::map<std::string_view, size_t> bySymbol;
};

const Tables &tables() {
  static const Tables t = [] {
    static const RawOverload raw[] = {
#define TK_LIBDEVICE_OVERLOAD(ENUM, SYMBOL, RESULT, ...)                                           \
  {BuiltinId::Libdevice##ENUM, SYMBOL, DType::RESULT, {__VA_ARGS__}},
#include "lang/Libdevice.def"
    };
    Tables t;
    t.overloads.reserve(std::size(raw)); // stable addresses for the functions' pointers
    for (const RawOverload &r : raw) {
      [[maybe_unused]] bool inserted = t.bySymbol.emplace(r.symbol, t.overloads.size()).second;
      assert(inserted && "a libdevice symbol is listed twice");
      t.overloads.push_back({r.symbol, r.result, std::vector<DType>(r.args)});
    }
    for (const RawFunction &f : kFunctions) {
      t.functionIndex[f.id] = t.functions.size();
      t.functions.push_back({f.id, f.name, f.arity, {}});
    }
    for (size_t i = 0; i < std::size(raw); ++i) {
      LibdeviceFunction &f = t.functions[t.functionIndex.at(raw[i].function)];
      assert(t.overloads[i].args.size() == f.arity && "overload arity differs from the function's");
      f.overloads.push_back(&t.overloads[i]);
    }
    return t;
  }();
  return t;
}

} // namespace

std::span<const LibdeviceFunction> allLibdeviceFunctions() { return tables().functions; }

const LibdeviceFunction *libdeviceFunction(BuiltinId id) {
  const Tables &t = tables();
  auto it = t.functionIndex.find(id);
  return it == t.functionIndex.end() ? nullptr : &t.functions[it->second];
}

const LibdeviceOverload *findLibdeviceOverload(std::string_view symbol) {
  const Tables &t = tables();
  auto it = t.bySymbol.find(symbol);
  return it == t.bySymbol.end() ? nullptr : &t.overloads[it->second];
}

} // namespace tk
