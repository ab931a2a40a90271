// lld.cpp — the in-process linker for HSACOs: lld's ELF driver behind a C function, so the
// backend links without starting a process (ld.lld alone takes about 60 ms to start). lld resets
// LLVM's command-line options when it runs; the backend sets none.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

extern "C" int amdgpu_lld_link(int argc, const char **argv, char **messages);

// lld's driver keeps global state (its context, error handler, option tables): two links at
// once in one process crash, so in-process links run one at a time.
static std::mutex link_mutex;

// Runs `ld.lld argv...`; returns its exit code and, in *messages, what it printed (malloc'd).
// Thread-safe: concurrent callers are serialised.
extern "C" int
amdgpu_lld_link(int argc, const char **argv, char **messages)
{
	std::lock_guard<std::mutex> lock(link_mutex);
	std::string text;
	llvm::raw_string_ostream out(text), err(text);
	// lld's crash recovery may give this thread a larger alternate signal stack of its own; the
	// thread's owner (a sanitizer runtime, or the program) expects its own back at thread exit.
	stack_t alt;
	bool had_alt = sigaltstack(nullptr, &alt) == 0;
	lld::Result r = lld::lldMain(llvm::ArrayRef<const char *>(argv, (size_t)argc), out, err,
				     {{lld::Gnu, &lld::elf::link}});
	if (had_alt) {
		stack_t now;
		if (sigaltstack(nullptr, &now) == 0 && now.ss_sp != alt.ss_sp && !(now.ss_flags & SS_ONSTACK)) {
			if (alt.ss_flags & SS_DISABLE)
				alt.ss_flags = SS_DISABLE;
			sigaltstack(&alt, nullptr);
		}
	}
	out.flush();
	err.flush();
	if (messages) {
		*messages = static_cast<char *>(std::malloc(text.size() + 1));
		std::memcpy(*messages, text.c_str(), text.size() + 1);
	}
	if (r.retCode == 0 && !r.canRunAgain)
		return 1;
	return r.retCode;
}
