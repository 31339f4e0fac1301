"""The context a chunk loses when cut out of its class, the pass registry, and the tokenizer rule
that lets the engineer's spelling meet the code's."""

from kopt.index.tokenize import tokens
from kopt.ingest.chunk import MAX_LINES
from kopt.ingest.enrich import Registry, passes_in
from kopt.ingest.pipeline import chunk_file

TD = '''
def TritonRewriteTensorPointer : Pass</*cli-arg*/"triton-rewrite-tensor-pointer", /*Op*/"mlir::ModuleOp"> {
  let summary = "Rewrite load/stores with tensor pointers into legacy load/stores";
  let dependentDialects = ["mlir::triton::TritonDialect"];
}
def TritonGPUPlain : Pass<"tritongpu-plain", "mlir::ModuleOp"> {
  let description = [{ no summary here }];
}
'''


def test_registry_reads_passes_whose_flag_follows_a_comment():
    reg = Registry()
    reg.learn(TD)
    assert reg.passes == {"TritonRewriteTensorPointer": "triton-rewrite-tensor-pointer", "TritonGPUPlain": "tritongpu-plain"}
    assert passes_in("#define GEN_PASS_DEF_TRITONREWRITETENSORPOINTER\n", reg) == [
        "TritonRewriteTensorPointer", "triton-rewrite-tensor-pointer"]


def _long_body(indent: str, comment: str) -> str:
    return "\n".join(f"{indent}x{i} = x{i} + 1{comment}" for i in range(MAX_LINES + 20))


def test_members_of_a_split_class_name_their_class_in_the_header():
    cpp = ("namespace mlir {\nstruct LoadOpConversion : public ConvertOpToLLVMPattern<triton::LoadOp> {\n"
           "  LogicalResult matchAndRewrite(triton::LoadOp op) const {\n" + _long_body("    ", ";") + "\n  }\n};\n"
           "int after() { return 0; }\n}\n")
    chunks, fell_back = chunk_file("lib/Load.cpp", cpp.encode())
    assert not fell_back
    parts = [c for c in chunks if c.qualname.startswith("mlir::LoadOpConversion::matchAndRewrite (part")]
    assert len(parts) >= 2
    for c in parts:
        assert c.header.endswith("| in struct LoadOpConversion : public ConvertOpToLLVMPattern<triton::LoadOp>")
        assert "loadopconversion" in tokens(c.text)  # so BM25 (and the embedder, which reads the header) see it
    after, = [c for c in chunks if c.symbol == "after"]
    assert not after.context  # the class's context ends with the class

    py = "class Semantic(Generic[T]):\n    def load(self, ptr):\n" + _long_body("        ", "") + "\n\n\ndef free():\n    pass\n"
    chunks, _ = chunk_file("python/semantic.py", py.encode())
    load = [c for c in chunks if c.qualname.startswith("Semantic.load")]
    assert load and all(c.context == "in class Semantic(Generic[T])" for c in load)
    assert [c.context for c in chunks if c.symbol == "free"] == [""]


def test_a_letter_with_digits_is_one_token_in_any_case():
    assert "v3" in tokens("DISABLE_MMA_V3") and "v3" in tokens("MMAv3")
    assert {"e4", "m3"} <= set(tokens("Float8E4M3FN")) & set(tokens("fp8 e4m3"))
    assert "i32" in tokens("I32") and "i32" in tokens("i32")
