// NativeModule: relocatable objects checked (CPU, format, symbols) and then linked into
// the process by an ORC LLJIT of their own.
#include "runtime/native/object_loader.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace tsr {

struct NativeModule::State {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

namespace {

void InitializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Makes the process's own symbols (libc, libm, ...) searchable.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently(nullptr);
  });
}

std::string ToString(llvm::Error error) { return llvm::toString(std::move(error)); }

// Symbols one object defines and needs, read with every accessor's error checked, so that
// malformed bytes are refused here rather than met by the linker.
struct ObjectSymbols {
  std::vector<std::string> defined;
  std::vector<std::string> undefined;
};

absl::StatusOr<ObjectSymbols> InspectObject(const NativeObject& object, const llvm::Triple& host_triple) {
  const std::string where = absl::StrCat("object '", object.name, "'");
  llvm::MemoryBufferRef buffer(llvm::StringRef(reinterpret_cast<const char*>(object.bytes.data()), object.bytes.size()),
                               object.name);
  auto parsed = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!parsed) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " is not a valid object file: ", ToString(parsed.takeError())));
  }
  const llvm::object::ObjectFile& file = **parsed;
  if (!file.isRelocatableObject()) {
    return absl::InvalidArgumentError(absl::StrCat(where, " is not a relocatable object file"));
  }
  if (file.getArch() != host_triple.getArch() || !file.isELF() != !host_triple.isOSBinFormatELF()) {
    return absl::FailedPreconditionError(absl::StrCat(where, " is for architecture '",
                                                      llvm::Triple::getArchTypeName(file.getArch()).str(),
                                                      "', this host is '", host_triple.str(), "'"));
  }
  for (const llvm::object::SectionRef& section : file.sections()) {
    if (auto name = section.getName(); !name) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has a malformed section: ", ToString(name.takeError())));
    }
    if (!section.isBSS() && !section.isVirtual()) {
      if (auto contents = section.getContents(); !contents) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " has a malformed section: ", ToString(contents.takeError())));
      }
    }
    for (const llvm::object::RelocationRef& relocation : section.relocations()) {
      const llvm::object::symbol_iterator symbol = relocation.getSymbol();
      if (symbol != file.symbol_end()) {
        if (auto name = symbol->getName(); !name) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, " has a malformed relocation: ", ToString(name.takeError())));
        }
      }
    }
  }
  ObjectSymbols symbols;
  for (const llvm::object::SymbolRef& symbol : file.symbols()) {
    auto flags = symbol.getFlags();
    if (!flags) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has a malformed symbol: ", ToString(flags.takeError())));
    }
    auto name = symbol.getName();
    if (!name) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has a malformed symbol: ", ToString(name.takeError())));
    }
    if (name->empty() || (*flags & llvm::object::SymbolRef::SF_FormatSpecific)) continue;
    if (*flags & llvm::object::SymbolRef::SF_Undefined) {
      symbols.undefined.push_back(name->str());
      continue;
    }
    auto section = symbol.getSection();
    if (!section) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has a malformed symbol '", name->str(), "': ", ToString(section.takeError())));
    }
    auto type = symbol.getType();
    if (!type) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has a malformed symbol '", name->str(), "': ", ToString(type.takeError())));
    }
    const bool is_entity = *type == llvm::object::SymbolRef::ST_Function || *type == llvm::object::SymbolRef::ST_Data;
    if ((*flags & llvm::object::SymbolRef::SF_Global) && is_entity) symbols.defined.push_back(name->str());
  }
  return symbols;
}

}  // namespace

uint64_t ObjectChecksum(absl::Span<const uint8_t> bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (uint8_t byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

NativeModule::NativeModule(std::unique_ptr<State> state) : state_(std::move(state)) {}
NativeModule::~NativeModule() = default;

absl::StatusOr<std::unique_ptr<NativeModule>> NativeModule::Load(absl::Span<const NativeObject> objects) {
  InitializeOnce();
  const llvm::Triple host_triple(llvm::sys::getProcessTriple());

  std::set<std::string> defined;
  std::vector<std::pair<std::string, std::string>> needed;  // (symbol, object name)
  for (const NativeObject& object : objects) {
    if (const uint64_t checksum = ObjectChecksum(object.bytes); checksum != object.checksum) {
      return absl::DataLossError(absl::StrCat("object '", object.name, "' (", object.bytes.size(),
                                              " bytes) is corrupted: checksum ", checksum, ", recorded ",
                                              object.checksum));
    }
    if (absl::Status supported = CheckHostSupports(object.target); !supported.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("object '", object.name, "': ", supported.message()));
    }
    auto symbols = InspectObject(object, host_triple);
    if (!symbols.ok()) return symbols.status();
    for (std::string& name : symbols->defined) {
      if (!defined.insert(name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("symbol '", name, "' is defined twice (again in object '", object.name, "')"));
      }
    }
    for (std::string& name : symbols->undefined) needed.emplace_back(std::move(name), object.name);
  }
  // An unresolved symbol makes ORC drop the whole object at lookup time with a terse
  // message; name it here instead.
  for (const auto& [symbol, object_name] : needed) {
    if (defined.count(symbol) != 0) continue;
    if (llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(symbol) == nullptr) {
      return absl::NotFoundError(absl::StrCat("object '", object_name, "' needs symbol '", symbol,
                                              "', which neither the loaded objects nor this process define"));
    }
  }

  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return absl::InternalError(absl::StrCat("cannot create the ORC JIT: ", ToString(jit.takeError())));
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!generator) {
    return absl::InternalError(absl::StrCat("cannot search this process's symbols: ", ToString(generator.takeError())));
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  for (const NativeObject& object : objects) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(reinterpret_cast<const char*>(object.bytes.data()), object.bytes.size()), object.name);
    if (llvm::Error error = (*jit)->addObjectFile(std::move(buffer))) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot add object '", object.name, "' to the JIT: ", ToString(std::move(error))));
    }
  }
  // Links everything now, so that relocation errors surface at load time.
  for (const std::string& symbol : defined) {
    auto address = (*jit)->lookup(symbol);
    if (!address) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot link symbol '", symbol, "': ", ToString(address.takeError())));
    }
  }
  auto state = std::make_unique<State>();
  state->jit = std::move(*jit);
  std::unique_ptr<NativeModule> module(new NativeModule(std::move(state)));
  module->defined_symbols_.assign(defined.begin(), defined.end());
  return module;
}

absl::StatusOr<void*> NativeModule::Lookup(absl::string_view symbol) const {
  const std::string name(symbol);
  if (!std::binary_search(defined_symbols_.begin(), defined_symbols_.end(), name)) {
    return absl::NotFoundError(absl::StrCat("symbol '", name, "' is not defined by the loaded objects (",
                                            defined_symbols_.size(),
                                            " defined: ", absl::StrJoin(defined_symbols_, ", "), ")"));
  }
  auto address = state_->jit->lookup(name);
  if (!address) {
    return absl::InternalError(absl::StrCat("cannot look up symbol '", name, "': ", ToString(address.takeError())));
  }
  return address->toPtr<void*>();
}

}  // namespace tsr
