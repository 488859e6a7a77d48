#include "driver/CodeObject.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

namespace tk {

size_t CodeObjectKernel::explicitArgs() const {
  size_t n = 0;
  while (n < args.size() && !args[n].hidden())
    ++n;
  return n;
}

uint32_t CodeObjectKernel::explicitBytes() const {
  uint32_t end = 0;
  for (size_t i = 0, n = explicitArgs(); i < n; ++i)
    end = std::max(end, args[i].offset + args[i].size);
  return end;
}

uint32_t CodeObjectKernel::workgroupSize() const {
  if (reqdWorkgroupSize[0] && reqdWorkgroupSize[1] && reqdWorkgroupSize[2])
    return reqdWorkgroupSize[0] * reqdWorkgroupSize[1] * reqdWorkgroupSize[2];
  return maxFlatWorkgroupSize;
}

const CodeObjectKernel *CodeObjectInfo::find(std::string_view name) const {
  for (const CodeObjectKernel &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

namespace {

//===----------------------------------------------------------------------===//
// MessagePack: the subset the metadata uses (maps, arrays, strings, integers,
// booleans), the rest skipped or refused. Big-endian, as the format says.
//===----------------------------------------------------------------------===//

struct MsgValue {
  enum class Kind : uint8_t { Nil, Bool, Int, Float, String, Binary, Array, Map, Ext };
  Kind kind = Kind::Nil;
  bool boolean = false;
  bool isUnsigned = false;
  uint64_t bits = 0; // Int: the value (two's complement when signed)
  double real = 0;
  std::string text;            // String, Binary
  std::vector<MsgValue> items; // Array
  // Map: keys[i] -> values[i]. Two vectors of the type being defined, not one
  // of pairs: std::pair needs a complete type, which libc++ and clang's
  // libstdc++ checks enforce.
  std::vector<MsgValue> keys, values;

  const MsgValue *field(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i].kind == Kind::String && keys[i].text == key)
        return &values[i];
    return nullptr;
  }
  // A non-negative integer that fits in 32 bits.
  bool asU32(uint32_t &out) const {
    if (kind != Kind::Int || (!isUnsigned && int64_t(bits) < 0) || bits > 0xffffffffu)
      return false;
    out = uint32_t(bits);
    return true;
  }
};

class MsgReader {
public:
  explicit MsgReader(std::string_view bytes) : bytes_(bytes) {}

  bool read(MsgValue &out, std::string &error) {
    if (!value(out, 0)) {
      error = error_;
      return false;
    }
    return true;
  }

private:
  static constexpr int kMaxDepth = 32;

  bool fail(std::string message) {
    if (error_.empty())
      error_ = fmt::format("{} at byte {} of the metadata", message, at_);
    return false;
  }
  bool take(size_t n, const char *&p) {
    if (bytes_.size() - at_ < n)
      return fail("truncated MessagePack");
    p = bytes_.data() + at_;
    at_ += n;
    return true;
  }
  bool big(size_t n, uint64_t &out) {
    const char *p;
    if (!take(n, p))
      return false;
    out = 0;
    for (size_t i = 0; i < n; ++i)
      out = (out << 8) | uint8_t(p[i]);
    return true;
  }
  bool bytes(size_t n, std::string &out) {
    const char *p;
    if (!take(n, p))
      return false;
    out.assign(p, n);
    return true;
  }
  // Each element takes at least a byte: a count above what is left is
  // malformed, and refusing it bounds what is reserved.
  bool count(uint64_t n, size_t perElement) {
    if (n > (bytes_.size() - at_) / perElement)
      return fail("a MessagePack container longer than the metadata");
    return true;
  }
  bool array(uint64_t n, MsgValue &out, int depth) {
    out.kind = MsgValue::Kind::Array;
    if (!count(n, 1))
      return false;
    out.items.resize(size_t(n));
    for (MsgValue &item : out.items)
      if (!value(item, depth + 1))
        return false;
    return true;
  }
  bool map(uint64_t n, MsgValue &out, int depth) {
    out.kind = MsgValue::Kind::Map;
    if (!count(n, 2))
      return false;
    out.keys.resize(size_t(n));
    out.values.resize(size_t(n));
    for (size_t i = 0; i < size_t(n); ++i)
      if (!value(out.keys[i], depth + 1) || !value(out.values[i], depth + 1))
        return false;
    return true;
  }
  bool integer(size_t n, bool isSigned, MsgValue &out) {
    out.kind = MsgValue::Kind::Int;
    out.isUnsigned = !isSigned;
    if (!big(n, out.bits))
      return false;
    if (isSigned && n < 8 && (out.bits >> (8 * n - 1)) & 1) // sign-extend
      out.bits |= ~uint64_t(0) << (8 * n);
    return true;
  }

  bool value(MsgValue &out, int depth) {
    if (depth > kMaxDepth)
      return fail("MessagePack nested too deeply");
    const char *p;
    if (!take(1, p))
      return false;
    const uint8_t b = uint8_t(*p);
    uint64_t n = 0;
    if (b <= 0x7f || b >= 0xe0) { // positive and negative fixint
      out.kind = MsgValue::Kind::Int;
      out.isUnsigned = b <= 0x7f;
      out.bits = b <= 0x7f ? b : uint64_t(int64_t(int8_t(b)));
      return true;
    }
    if (b >= 0x80 && b <= 0x8f)
      return map(b & 0x0f, out, depth);
    if (b >= 0x90 && b <= 0x9f)
      return array(b & 0x0f, out, depth);
    if (b >= 0xa0 && b <= 0xbf) {
      out.kind = MsgValue::Kind::String;
      return bytes(b & 0x1f, out.text);
    }
    switch (b) {
    case 0xc0:
      out.kind = MsgValue::Kind::Nil;
      return true;
    case 0xc2:
    case 0xc3:
      out.kind = MsgValue::Kind::Bool;
      out.boolean = b == 0xc3;
      return true;
    case 0xc4:
    case 0xc5:
    case 0xc6: // bin 8/16/32
      out.kind = MsgValue::Kind::Binary;
      return big(size_t(1) << (b - 0xc4), n) && bytes(size_t(n), out.text);
    case 0xc7:
    case 0xc8:
    case 0xc9: // ext 8/16/32: a length, a type byte, the data
      out.kind = MsgValue::Kind::Ext;
      return big(size_t(1) << (b - 0xc7), n) && take(1, p) && bytes(size_t(n), out.text);
    case 0xca: {
      out.kind = MsgValue::Kind::Float;
      if (!big(4, n))
        return false;
      float f;
      uint32_t u = uint32_t(n);
      std::memcpy(&f, &u, 4);
      out.real = f;
      return true;
    }
    case 0xcb:
      out.kind = MsgValue::Kind::Float;
      if (!big(8, n))
        return false;
      std::memcpy(&out.real, &n, 8);
      return true;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
      return integer(size_t(1) << (b - 0xcc), false, out);
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
      return integer(size_t(1) << (b - 0xd0), true, out);
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: // fixext 1..16: a type byte, the data
      out.kind = MsgValue::Kind::Ext;
      return take(1, p) && bytes(size_t(1) << (b - 0xd4), out.text);
    case 0xd9:
    case 0xda:
    case 0xdb: // str 8/16/32
      out.kind = MsgValue::Kind::String;
      return big(size_t(1) << (b - 0xd9), n) && bytes(size_t(n), out.text);
    case 0xdc:
    case 0xdd: // array 16/32
      return big(size_t(2) << (b - 0xdc), n) && array(n, out, depth);
    case 0xde:
    case 0xdf: // map 16/32
      return big(size_t(2) << (b - 0xde), n) && map(n, out, depth);
    default: // 0xc1: never used
      return fail(fmt::format("MessagePack byte 0x{:02x} is not a value", b));
    }
  }

  std::string_view bytes_;
  size_t at_ = 0;
  std::string error_;
};

//===----------------------------------------------------------------------===//
// ELF: the notes of a little-endian ELF64 file.
//===----------------------------------------------------------------------===//

constexpr uint16_t kMachineAMDGPU = 224;     // EM_AMDGPU
constexpr uint32_t kSectionNote = 7;         // SHT_NOTE
constexpr uint32_t kSegmentNote = 4;         // PT_NOTE
constexpr uint32_t kNoteAMDGPUMetadata = 32; // NT_AMDGPU_METADATA

// Little-endian reads at an offset already checked against the size.
template <class T> T le(std::string_view b, uint64_t at) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= T(uint8_t(b[at + i])) << (8 * i);
  return v;
}

bool within(std::string_view b, uint64_t offset, uint64_t size) {
  return offset <= b.size() && size <= b.size() - offset;
}

// The descriptor of the first AMDGPU metadata note in the notes
// [offset, offset + size).
bool findMetadata(std::string_view elf, uint64_t offset, uint64_t size, std::string_view &out) {
  if (!within(elf, offset, size))
    return false;
  std::string_view notes = elf.substr(offset, size);
  uint64_t at = 0;
  auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t(3); };
  while (notes.size() - at >= 12) {
    uint32_t nameSize = le<uint32_t>(notes, at), descSize = le<uint32_t>(notes, at + 4);
    uint32_t type = le<uint32_t>(notes, at + 8);
    uint64_t name = at + 12, desc = name + align4(nameSize);
    if (!within(notes, name, nameSize) || !within(notes, desc, descSize))
      return false;
    std::string_view owner = notes.substr(name, nameSize);
    if (type == kNoteAMDGPUMetadata && owner == std::string_view("AMDGPU\0", 7)) {
      out = notes.substr(desc, descSize);
      return true;
    }
    at = desc + align4(descSize);
  }
  return false;
}

bool metadataNote(std::string_view elf, std::string_view &out, std::string &error) {
  auto bad = [&](const std::string &why) {
    error = fmt::format("not an AMDGPU code object: {}", why);
    return false;
  };
  if (elf.size() < 64 || elf.substr(0, 4) != "\x7f"
                                             "ELF")
    return bad("no ELF header");
  if (elf[4] != 2 || elf[5] != 1)
    return bad("not a little-endian 64-bit ELF file");
  if (le<uint16_t>(elf, 18) != kMachineAMDGPU)
    return bad(
        fmt::format("ELF machine {} is not AMDGPU ({})", le<uint16_t>(elf, 18), kMachineAMDGPU));
  // The sections first (the linker keeps `.note`), then the program headers
  // (a code object with its section headers stripped still has PT_NOTE).
  uint64_t shoff = le<uint64_t>(elf, 40);
  uint16_t shentsize = le<uint16_t>(elf, 58), shnum = le<uint16_t>(elf, 60);
  for (uint16_t i = 0; shentsize >= 64 && i < shnum; ++i) {
    uint64_t sh = shoff + uint64_t(i) * shentsize;
    if (!within(elf, sh, 64))
      return bad("a section header past the end of the file");
    if (le<uint32_t>(elf, sh + 4) == kSectionNote &&
        findMetadata(elf, le<uint64_t>(elf, sh + 24), le<uint64_t>(elf, sh + 32), out))
      return true;
  }
  uint64_t phoff = le<uint64_t>(elf, 32);
  uint16_t phentsize = le<uint16_t>(elf, 54), phnum = le<uint16_t>(elf, 56);
  for (uint16_t i = 0; phentsize >= 56 && i < phnum; ++i) {
    uint64_t ph = phoff + uint64_t(i) * phentsize;
    if (!within(elf, ph, 56))
      return bad("a program header past the end of the file");
    if (le<uint32_t>(elf, ph) == kSegmentNote &&
        findMetadata(elf, le<uint64_t>(elf, ph + 8), le<uint64_t>(elf, ph + 32), out))
      return true;
  }
  return bad("no AMDGPU metadata note (NT_AMDGPU_METADATA)");
}

//===----------------------------------------------------------------------===//
// The metadata map -> CodeObjectInfo
//===----------------------------------------------------------------------===//

bool readArg(const MsgValue &v, KernargEntry &out, std::string &why) {
  if (v.kind != MsgValue::Kind::Map) {
    why = "an .args entry is not a map";
    return false;
  }
  const MsgValue *offset = v.field(".offset"), *size = v.field(".size");
  const MsgValue *kind = v.field(".value_kind");
  if (!offset || !offset->asU32(out.offset) || !size || !size->asU32(out.size) || !kind ||
      kind->kind != MsgValue::Kind::String) {
    why = "an .args entry without .offset, .size and .value_kind";
    return false;
  }
  out.valueKind = kind->text;
  if (const MsgValue *name = v.field(".name"); name && name->kind == MsgValue::Kind::String)
    out.name = name->text;
  if (const MsgValue *space = v.field(".address_space");
      space && space->kind == MsgValue::Kind::String)
    out.addressSpace = space->text;
  if (uint64_t(out.offset) + out.size > 0xffffffffu) {
    why = "an .args entry past 4 GiB";
    return false;
  }
  return true;
}

bool readKernel(const MsgValue &v, CodeObjectKernel &out, std::string &why) {
  if (v.kind != MsgValue::Kind::Map) {
    why = "an amdhsa.kernels entry is not a map";
    return false;
  }
  const MsgValue *name = v.field(".name");
  if (!name || name->kind != MsgValue::Kind::String) {
    why = "a kernel without .name";
    return false;
  }
  out.name = name->text;
  if (const MsgValue *symbol = v.field(".symbol"); symbol && symbol->kind == MsgValue::Kind::String)
    out.symbol = symbol->text;
  // The numbers the runtime uses; absent ones stay 0.
  const std::pair<const char *, uint32_t *> numbers[] = {
      {".kernarg_segment_size", &out.kernargSegmentSize},
      {".kernarg_segment_align", &out.kernargSegmentAlign},
      {".group_segment_fixed_size", &out.groupSegmentFixedSize},
      {".private_segment_fixed_size", &out.privateSegmentFixedSize},
      {".max_flat_workgroup_size", &out.maxFlatWorkgroupSize},
      {".wavefront_size", &out.wavefrontSize},
      {".sgpr_count", &out.sgprCount},
      {".vgpr_count", &out.vgprCount},
      {".agpr_count", &out.agprCount}};
  for (auto [key, slot] : numbers)
    if (const MsgValue *n = v.field(key); n && !n->asU32(*slot)) {
      why = fmt::format("kernel '{}': {} is not a 32-bit count", out.name, key);
      return false;
    }
  if (const MsgValue *reqd = v.field(".reqd_workgroup_size")) {
    if (reqd->kind != MsgValue::Kind::Array || reqd->items.size() != 3 ||
        !reqd->items[0].asU32(out.reqdWorkgroupSize[0]) ||
        !reqd->items[1].asU32(out.reqdWorkgroupSize[1]) ||
        !reqd->items[2].asU32(out.reqdWorkgroupSize[2])) {
      why = fmt::format("kernel '{}': .reqd_workgroup_size is not three counts", out.name);
      return false;
    }
  }
  if (const MsgValue *args = v.field(".args")) {
    if (args->kind != MsgValue::Kind::Array) {
      why = fmt::format("kernel '{}': .args is not an array", out.name);
      return false;
    }
    for (const MsgValue &a : args->items) {
      KernargEntry entry;
      if (!readArg(a, entry, why)) {
        why = fmt::format("kernel '{}': {}", out.name, why);
        return false;
      }
      out.args.push_back(std::move(entry));
    }
  }
  return true;
}

} // namespace

bool readCodeObject(std::string_view elf, CodeObjectInfo &out, std::string &error) {
  out = CodeObjectInfo();
  std::string_view note;
  if (!metadataNote(elf, note, error))
    return false;
  MsgValue root;
  if (!MsgReader(note).read(root, error)) {
    error = "malformed AMDGPU metadata: " + error;
    return false;
  }
  std::string why;
  const MsgValue *kernels =
      root.kind == MsgValue::Kind::Map ? root.field("amdhsa.kernels") : nullptr;
  if (!kernels || kernels->kind != MsgValue::Kind::Array) {
    error = "malformed AMDGPU metadata: no amdhsa.kernels array";
    return false;
  }
  if (const MsgValue *target = root.field("amdhsa.target");
      target && target->kind == MsgValue::Kind::String)
    out.target = target->text;
  for (const MsgValue &k : kernels->items) {
    CodeObjectKernel kernel;
    if (!readKernel(k, kernel, why)) {
      error = "malformed AMDGPU metadata: " + why;
      return false;
    }
    out.kernels.push_back(std::move(kernel));
  }
  return true;
}

} // namespace tk
