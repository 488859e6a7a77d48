#include "ir/Opcode.h"

namespace tk {
namespace {

using namespace OpTrait;

constexpr OpInfo kOps[] = {
#define TK_OP(ENUM, KEYWORD, MINOPS, MAXOPS, NRES, NREG, TRAITS, ATTRS)                            \
  {KEYWORD, MINOPS, MAXOPS, NRES, NREG, TRAITS, ATTRS},
#include "ir/Ops.def"
};

} // namespace

const OpInfo &opInfo(Opcode op) { return kOps[static_cast<unsigned>(op)]; }

unsigned numOpcodes() { return sizeof(kOps) / sizeof(kOps[0]); }

std::optional<Opcode> lookupOpcode(std::string_view keyword) {
  // A linear scan over ~80 keywords: the text parser calls this once per op,
  // which is not where time goes.
  for (unsigned i = 0; i < numOpcodes(); ++i)
    if (kOps[i].keyword == keyword)
      return static_cast<Opcode>(i);
  return std::nullopt;
}

} // namespace tk
