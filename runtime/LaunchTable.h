// LaunchTable: the lookup on a launch's fast path (tk::Kernel's specialised
// variants, tk::Autotuner's tuned keys). Many threads look entries up on
// every launch; an entry is added once per new key, rarely, by a thread that
// holds the owner's lock. A lookup takes no lock, allocates nothing and
// touches no reference count: it compares the key with the entry inserted
// last (a caller that launches one key over and over stops there, without
// hashing), else hashes it and probes an open-addressing hash table, two
// acquire loads (the table, then a slot) per probe.
//
//   struct Entry { uint64_t hash; int key; const GpuKernel *kernel; };
//   LaunchTable<Entry> table;
//   // a launch, any thread:
//   auto same = [&](const Entry &e) { return e.key == k; };
//   if (const Entry *e = table.find([&] { return hashOf(k); }, same))
//     ... launch e->kernel ...
//   // a miss: under the owner's mutex, look again, then compile and
//   table.insert(std::make_unique<Entry>(Entry{hashOf(k), k, compiled}));
//
// Entries are immutable once inserted and live as long as the table: a
// reader may hold an entry's address for as long as it holds the owner.
// Nothing is removed. An insert fills an empty slot with a release store, so
// a reader sees either nothing there (and takes the slow path, which finds
// the entry under the lock) or the whole entry. When an insert would fill
// the table past half, a table twice the size is built, filled and
// published; the old one stays allocated until the LaunchTable goes,
// because a reader may still be probing it (all tables together take at
// most twice the last one's slots).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tk::detail {

/// Mixes a 64-bit value into a running hash (splitmix64's finaliser), for
/// the callers' keys.
inline uint64_t mixHash(uint64_t hash, uint64_t value) {
  uint64_t z = hash ^ (value + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// `Entry` has a `uint64_t hash` member (see the header comment).
template <class Entry> class LaunchTable {
public:
  LaunchTable() = default;
  LaunchTable(const LaunchTable &) = delete;
  LaunchTable &operator=(const LaunchTable &) = delete;

  /// The entry for which `same(entry)` holds, or null; `hashOf()` gives
  /// the hash such an entry has. Any thread, any time, including during an
  /// insert.
  template <class HashOf, class Same>
  const Entry *find(HashOf &&hashOf, Same &&same) const noexcept {
    const Entry *latest = latest_.load(std::memory_order_acquire);
    if (latest && same(*latest))
      return latest;
    const Table *t = current_.load(std::memory_order_acquire);
    if (!t)
      return nullptr;
    const uint64_t hash = hashOf();
    const size_t mask = t->size - 1;
    for (size_t i = size_t(hash) & mask;; i = (i + 1) & mask) {
      const Entry *e = t->slots[i].load(std::memory_order_acquire);
      if (!e)
        return nullptr; // at most half full: every probe ends at an empty slot
      if (e->hash == hash && same(*e))
        return e;
    }
  }

  /// Adds an entry the caller found absent; the caller holds the lock that
  /// serialises inserts. Returns its address, stable until the table goes.
  const Entry *insert(std::unique_ptr<Entry> entry) {
    Table *t = current_.load(std::memory_order_relaxed);
    if (!t || 2 * (entries_.size() + 1) > t->size) {
      auto bigger = std::make_unique<Table>(t ? 2 * t->size : kFirstSize);
      for (const std::unique_ptr<Entry> &e : entries_)
        place(*bigger, e.get());
      t = bigger.get();
      tables_.push_back(std::move(bigger));
      current_.store(t, std::memory_order_release);
    }
    const Entry *e = entries_.emplace_back(std::move(entry)).get();
    place(*t, e);
    latest_.store(e, std::memory_order_release);
    return e;
  }

  size_t size() const { return entries_.size(); } // the inserting thread's view

private:
  static constexpr size_t kFirstSize = 16;
  struct Table {
    explicit Table(size_t n) : size(n), slots(new std::atomic<const Entry *>[n]) {
      for (size_t i = 0; i < n; ++i)
        slots[i].store(nullptr, std::memory_order_relaxed);
    }
    size_t size;
    std::unique_ptr<std::atomic<const Entry *>[]> slots;
  };

  // Release: a reader that loads the slot sees the entry's fields.
  static void place(const Table &t, const Entry *e) {
    const size_t mask = t.size - 1;
    size_t i = size_t(e->hash) & mask;
    while (t.slots[i].load(std::memory_order_relaxed))
      i = (i + 1) & mask;
    t.slots[i].store(e, std::memory_order_release);
  }

  std::atomic<Table *> current_{nullptr};
  std::atomic<const Entry *> latest_{nullptr};  // the entry inserted last
  std::vector<std::unique_ptr<Table>> tables_;  // every table built, the current one last
  std::vector<std::unique_ptr<Entry>> entries_; // in insertion order
};

} // namespace tk::detail
