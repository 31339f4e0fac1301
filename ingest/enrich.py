"""Enrichment: which passes, MLIR ops, diagnostics and environment knobs a chunk concerns.

Pass and op names are resolved against registries read from the corpus's own TableGen files
(`def TritonGPUCoalesce : Pass<"tritongpu-coalesce", ...>`, `def TT_LoadOp : TT_Op<"load", ...>`),
so `GEN_PASS_DEF_TRITONGPUCOALESCE`, `impl::TritonGPUCoalesceBase`, `passes.ttgpuir.add_coalesce`
and `triton::LoadOp` all map to the names an engineer searches for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TD_PASS = re.compile(r"\bdef\s+(\w+)\s*:\s*(?:\w+)?Pass<\s*(?:/\*[^*]*\*/\s*)?\"([\w-]+)\"")
_TD_OP = re.compile(r"\bdef\s+(([A-Za-z]+)_(\w+?)Op)\s*:\s*\w+<\s*\"([\w.]+)\"")
_DIALECT_PREFIX = {"TT": "tt", "TTG": "ttg", "TTNG": "ttng", "NVGPU": "nvgpu", "NVWS": "nvws", "TTNV": "ttng",
                   "AMDGPU": "amdgpu", "TTAG": "amdgpu", "Gluon": "gluon", "TTI": "tti", "Proton": "proton"}
_NS_DIALECT = {"triton::gpu": "ttg", "triton::nvidia_gpu": "ttng", "triton::nvgpu": "nvgpu", "ttg": "ttg",
               "ttng": "ttng", "triton::amdgpu": "amdgpu", "triton::nvws": "nvws", "triton": "tt", "tt": "tt",
               "LLVM": "llvm", "NVVM": "nvvm", "ROCDL": "rocdl", "arith": "arith", "scf": "scf", "math": "math",
               "cf": "cf", "gpu": "gpu", "func": "func", "tensor": "tensor", "vector": "vector", "memref": "memref"}
_OP_NAME = re.compile(r"(?<![#!\"\w.])(tt|ttg|ttng|triton_gpu|triton_nvidia_gpu|nvgpu|nvws|amdgpu|scf|arith|math|cf|llvm|nvvm|"
                      r"rocdl|gpu|tensor|vector|ub|tti|hivm|annotation|bufferization|linalg|memref|hacc)\.([a-z_][a-z0-9_.]*[a-z0-9_])(?![\w.]*(?:[<\-\"]|\s*=))")
_OP_CLASS = re.compile(r"\b((?:triton::gpu|triton::nvidia_gpu|triton::nvgpu|triton::amdgpu|triton::nvws|triton|ttg|ttng|"
                       r"tt|LLVM|NVVM|ROCDL|arith|scf|math|cf|gpu|tensor|vector|memref)::)?([A-Z]\w*?)Op\b(?!::)")
_GEN_PASS = re.compile(r"\bGEN_PASS_(?:DEF|DECL)_([A-Z0-9_]+)")
_IMPL_BASE = re.compile(r"\bimpl::(\w+)Base\b")
_ADD_PASS = re.compile(r"\b(?:passes\.\w+\.|\bpm\.)?(add_[a-z0-9_]+)\s*\(")
_CREATE_PASS = re.compile(r"\bcreate(\w+?)Pass\s*\(")
_EMIT = re.compile(r"(emitError|emitOpError|emitRemark|emitWarning|report_fatal_error|llvm_unreachable|"
                   r"raise\s+[\w.]*(?:Error|Exception)|warnings\.warn|CompilationError|errorf?)\s*(?:\(|<<)")
_STRING = re.compile(r"(?:[frbu]{0,2})\"((?:[^\"\\\n]|\\.)*)\"|(?:[frbu]{0,2})'((?:[^'\\\n]|\\.)*)'")
_ENV = re.compile(r"(?:getenv|getBoolEnv|getStrEnv|getIntEnv|getenv_bool|environ\.get|environ\[|env_bool|env_str|"
                  r"env_int|env_opt_str|env_opt_bool|env_class|env_bool_or_none|env_var|isEnvValueBool)\s*\(?\s*[\"']([A-Za-z_][A-Za-z0-9_]+)[\"']")
_ENV_LITERAL = re.compile(r"[\"']((?:TRITON|MLIR|LLVM|NVPTX|PTXAS|CUDA|TORCHINDUCTOR|ASCEND|NPU)_[A-Z0-9_]+)[\"']")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


@dataclass
class Registry:
    """Pass records (name -> flag) and op classes (record/class -> dialect.mnemonic) of one corpus."""

    passes: dict[str, str] = field(default_factory=dict)
    ops: dict[str, str] = field(default_factory=dict)      # "TT_LoadOp" and "tt::LoadOp" -> "tt.load"

    def learn(self, td_source: str) -> None:
        for name, flag in _TD_PASS.findall(td_source):
            self.passes[name] = flag
        for record, prefix, _cls, mnemonic in _TD_OP.findall(td_source):
            dialect = _DIALECT_PREFIX.get(prefix)
            if dialect:
                self.ops[f"{dialect}::{record.split('_', 1)[1]}"] = f"{dialect}.{mnemonic}"

    def pass_names(self, key: str) -> list[str]:
        """A pass record name (exact or upper-cased as in GEN_PASS_DEF_) -> [record, flag]."""
        for name, flag in self.passes.items():
            if key in (name, name.upper()):
                return [name, flag]
        return [key]

    def pass_by_binding(self, binding: str) -> list[str]:
        """`add_coalesce` -> the pass whose flag ends with `-coalesce`."""
        tail = binding.removeprefix("add_").replace("_", "-")
        hits = sorted((len(flag), name, flag) for name, flag in self.passes.items() if flag == tail or flag.endswith("-" + tail))
        return [hits[0][1], hits[0][2], binding] if hits else [binding]

    def op_name(self, namespace: str, cls: str) -> str:
        dialect = _NS_DIALECT.get(namespace.rstrip(":"), "")
        if dialect and f"{dialect}::{cls}Op" in self.ops:
            return self.ops[f"{dialect}::{cls}Op"]
        if not dialect:
            hits = [v for k, v in self.ops.items() if k.endswith(f"::{cls}Op")]
            return hits[0] if len(hits) == 1 else ""
        return f"{dialect}.{(_snake(cls) if dialect in ('tt', 'ttg', 'ttng', 'nvgpu', 'amdgpu', 'nvws') else cls.lower())}"


def passes_in(text: str, reg: Registry) -> list[str]:
    found: list[str] = []
    for key in _GEN_PASS.findall(text) + _IMPL_BASE.findall(text):
        found += reg.pass_names(key)
    for binding in _ADD_PASS.findall(text):
        found += reg.pass_by_binding(binding)
    for name, flag in _TD_PASS.findall(text):
        found += [name, flag]
    for name in _CREATE_PASS.findall(text):
        if name in reg.passes:
            found += reg.pass_names(name)
    return list(dict.fromkeys(found))


def ops_in(text: str, reg: Registry) -> list[str]:
    found = [f"{d if d not in ('triton_gpu', 'triton_nvidia_gpu') else {'triton_gpu': 'ttg', 'triton_nvidia_gpu': 'ttng'}[d]}.{m}"
             for d, m in _OP_NAME.findall(text)]
    for ns, cls in _OP_CLASS.findall(text):
        name = reg.op_name(ns or "", cls)
        if name:
            found.append(name)
    return list(dict.fromkeys(found))[:40]


def diagnostics_in(text: str) -> list[str]:
    """Message text of errors/remarks/warnings raised: the string literals of each emitting statement."""
    out = []
    for m in _EMIT.finditer(text):
        stmt = text[m.end() : m.end() + 400]
        stop = re.search(r";\s*$|\)\s*$", stmt, re.M)
        stmt = stmt[: stop.end()] if stop else stmt
        parts = [a or b for a, b in _STRING.findall(stmt)]
        msg = " ".join(p.strip() for p in parts if p.strip())
        if len(msg) >= 6:
            out.append(msg[:300])
    return list(dict.fromkeys(out))


def env_knobs_in(text: str) -> list[str]:
    return list(dict.fromkeys(_ENV.findall(text) + _ENV_LITERAL.findall(text)))
