"""The closed vocabulary of remark names: every name a pass may emit, its kind, the passes that
emit it and what it means for a C programmer. `lsp/REMARKS.md` (where editors link each
diagnostic, ``REMARKS.md#Name``) is generated from it:

    python -m core_compiler.remark_names --markdown > lsp/REMARKS.md

`tests/test_remark_registry.py` checks that every name the code emits is here, with its kind,
and that `REMARKS.md` is this module's output. A new remark name is a new `_entry` below.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from core_compiler.remarks import RemarkKind

MISSED, PASSED, ANALYSIS = RemarkKind.MISSED, RemarkKind.PASSED, RemarkKind.ANALYSIS

# the passes that read a loop nest with `scop/region.py`'s checks report its problems
REGION = ("scop-detect", "ad")


@dataclass(frozen=True)
class RemarkName:
    name: str
    kind: RemarkKind
    passes: tuple[str, ...]  # the `pass_name`s of the remarks with this name
    section: str  # the heading it is listed under in REMARKS.md
    doc: str  # one line: what it means
    more: str = ""  # why, and what to change in the code for another outcome


SETUP = "Syntax and set-up"
READING = "How hexplore reads your C (analysis)"
NOT_MODELED = "Why a loop nest is not modeled (missed)"
FACTS = "Facts about modeled loop nests (analysis)"
GPU = "GPU mapping and profitability"
CPU = "CPU code"
AD = "Differentiation (`hexplore grad`)"
CUDA_INPUT = "CUDA kernels you wrote (`__global__`)"

SECTIONS = (SETUP, READING, NOT_MODELED, FACTS, GPU, CPU, AD, CUDA_INPUT)

_ENTRIES: list[RemarkName] = []


def _entry(
    name: str, kind: RemarkKind, passes: tuple[str, ...], section: str, doc: str, more: str = ""
) -> None:
    _ENTRIES.append(RemarkName(name, kind, passes, section, doc, more))


# ------------------------------------------------------------------------------ syntax and set-up

_entry("SyntaxError", MISSED, ("frontend",), SETUP,
       "The C (or CUDA) front end could not parse the code at this position; the message is clang's.",
       "Code in the same function is not analysed until the error is fixed (see `FunctionHasErrors`). "
       "Missing headers also show here: set `includePaths`/`defines` or provide a "
       "`compile_commands.json`.")  # fmt: skip
_entry("MalformedDirective", MISSED, ("frontend",), SETUP,
       "A `#pragma hexplore` line hexplore cannot read; the range is the word at fault and the "
       "message says what is accepted: `#pragma hexplore gpu`, `#pragma hexplore gpu block(32, 8)` "
       "(optionally with `tile(64, 64)`) and `#pragma hexplore cpu`.",
       "Other pragmas (`#pragma omp ...`, `#pragma unroll`) are not read by hexplore and left alone.")  # fmt: skip
_entry("DirectiveNotOnLoopNest", MISSED, ("scop-detect",), SETUP,
       "A `#pragma hexplore` line decides where the loop nest right below it runs (blank lines, "
       "comments and other pragmas between them are fine); this one is not above the outermost "
       "loop of a nest hexplore models, or another directive already decides that nest, so it "
       "is ignored.")  # fmt: skip
_entry("FunctionHasErrors", MISSED, ("frontend",), SETUP,
       "The function contains a syntax error, so hexplore did not analyse it (its loops would be "
       "guessed from a broken parse).",
       "The other functions of the file are analysed normally.")  # fmt: skip
_entry("FrontendCrashed", MISSED, ("frontend",), SETUP,
       "The C front end (libclang, in a process of its own) crashed while parsing the file or "
       "reading one function; that file or function is not analysed, everything else is.",
       "Extremely deep code does this: an expression of thousands of terms (generated, or a macro's "
       "expansion) or statements nested thousands deep. Split it into several statements.")  # fmt: skip
_entry("FrontendBudgetExceeded", MISSED, ("frontend",), SETUP,
       "The C front end ran past its time or memory limit (60 s and 4 GB by default) while parsing "
       "the file or reading one function, and was stopped; that file or function is not analysed.",
       "A macro that expands to an enormous expression, a huge generated file or an include that "
       "never ends do this. `HEXPLORE_FRONTEND_TIMEOUT_S` and `HEXPLORE_FRONTEND_MEMORY_MB` raise "
       "the limits.")  # fmt: skip
_entry("IncludeRefused", MISSED, ("frontend",), SETUP,
       "An `#include` (or an `-include` flag, say from `compile_commands.json`) names a device, a "
       "FIFO or a socket, not a file (`/dev/stdin`, `/dev/zero`): hexplore parses without it.",
       "Reading such a file can block forever or never end. Include regular files only.")  # fmt: skip
_entry("InternalError", MISSED, ("frontend", "explorer"), SETUP,
       "hexplore itself failed on this function (a bug, not a problem in your code).",
       "The other functions are unaffected. Please report it with the function's source.")  # fmt: skip

# ------------------------------------------------------------------------- how hexplore reads C

_entry("WhileAsFor", ANALYSIS, ("frontend",), READING,
       "A `while` loop that counts a variable by a constant step (`i = 0; while (i < n) { ...; i++; }`) "
       "is read as the `for` loop it means.",
       "The counter must be set before the loop, tested by the condition, changed only by the last "
       "statement of the body, and the body must not `continue`.")  # fmt: skip
_entry("NotNullAssumption", ANALYSIS, ("frontend",), READING,
       "An early `if (p == NULL) return;` (or `!p`) is taken as never true: hexplore models the "
       "loops for when the arrays exist.",
       "The rest of the function becomes the body of the early return's condition, so the loops "
       "after it are modeled like the loops of any other function.")  # fmt: skip
_entry("PointerIntoArray", ANALYSIS, ("frontend",), READING,
       "A local pointer into an array (`double *row = A + i * m;`, `&A[i][0]`) that is set once "
       "and only indexed is read as the array itself: `row[k]` is the element of `A` k places "
       "further on.",
       "The pointer must be set from values that do not change in its block; its declaration and "
       "setting are dropped from the model.")  # fmt: skip
_entry("UndeclaredFunction", ANALYSIS, ("frontend",), READING,
       "A call to a function that is not declared (`min`, `floord`, `__pencil_assume` with no "
       "prototype: C89's implicit declaration, an error in C99) is read as a call to an unknown "
       "function, not as a syntax error.",
       "The function's other loops are analysed; a loop nest around the call is not modeled "
       "([ImpureCall](#ImpureCall)). Declare or define the function: a `{ return <expression>; }` "
       "helper is inlined, and math such as `fmin` is known.")  # fmt: skip
_entry("InlinedCall", ANALYSIS, ("frontend",), READING,
       "A call statement of your own `void` helper that updates arrays (`bump(a, i);` with "
       "`static void bump(double *a, int i) { a[i] += 1.0; }`) is read as the helper's body, its "
       "parameters bound to the arguments: `a[i] += 1.0;`. The loops and assignments are then "
       "modeled like the caller's own.",
       "The helper must be defined in the file, return nothing, take numbers and pointers to "
       "numbers, and read and write only its parameters and its own number locals (no global, no "
       "call that is not itself inlined, no `return`, no assignment to a parameter). A pointer "
       "argument must be an array the caller names (`x`) or a row of one (`A[i]`).")  # fmt: skip
_entry("InductionVariable", ANALYSIS, ("frontend",), READING,
       "A scalar set in the loop nest to an affine expression of the loop counters and sizes "
       "(`j = i + 1;`) and then used, in the same iteration, where that value is the one it has "
       "(`a[j]`) is read as that expression: `a[i + 1]`.",
       "The scalar must be set by one plain assignment in the loop body, before its uses, from "
       "variables that do not change between the assignment and its uses; the assignment itself "
       "is kept. A running counter, set right before a loop and stepped by a constant once per "
       "iteration (`j = 0; for (...) { a[j] = ...; j += 2; }`), is read in closed form "
       "(`a[0 + 2 * i]`); where nothing after the loop reads it, its step is left out, so the "
       "iterations stay independent.")  # fmt: skip
_entry("FieldsAsArrays", ANALYSIS, ("frontend",), READING,
       "An array of structs passed as a parameter (`struct body *bodies`) whose fields the function "
       "uses as `bodies[i].vx` is read as rows of numbers, one row per struct, each field a column: "
       "each field is an array of its own, in the structs' own memory.",
       "Columns and rows are the fields' offsets and the struct's size as the compiler lays them "
       "out, so two fields of one struct are distinct memory and one field is the same memory "
       "wherever it is used. The generated C accesses `bodies[i].vx` as written; LLVM code steps "
       "by the struct's size. The fields used must be numbers of one type, and the parameter used "
       "only through them ([StructField](#StructField)).")  # fmt: skip
_entry("RunTimeStep", ANALYSIS, ("frontend",), READING,
       "A `for` loop that steps by a size known only at run time (`for (i = lo; i < n; i += s)`) is "
       "read as `if (s >= 1) for (i = lo; i < n; i++)` whose statements run where "
       "`(i - lo) % s == 0`: exactly the original's, assuming `s >= 1`.",
       "With `s <= 0` the original loop would not end or would overflow `i` (undefined behaviour); the "
       "generated code then does nothing. The loop visits every `i`, `s` times as many as the "
       "original, and its dependences are those of every `i` (safe, maybe less parallel). The step "
       "and start must be integer variables the loop does not change, and the body assignments, "
       "declarations, `if`s and `for` loops (else [NonCanonicalLoop](#NonCanonicalLoop)); "
       "`i -= s` is read likewise, counting down.")  # fmt: skip
_entry("BreakAsCondition", ANALYSIS, ("frontend",), READING,
       "A `for` loop whose body starts with `if (c) break;` (`if (j > i) break;`) is read as the "
       "loop `for (...; cond && !c; ...)`, which is exactly what it does.",
       "Only a `break` that is the whole `if` at the very start of the body; the loop is then "
       "modeled when that condition bounds the counter (a `break` on data, "
       "`if (a[j] == key) break;`, is a bound that reads an array: "
       "[NonAffineLoopBound](#NonAffineLoopBound)).")  # fmt: skip
_entry("ContinueAsGuard", ANALYSIS, ("frontend",), READING,
       "An `if` in a `for` loop's body that ends the iteration with `continue` "
       "(`if (i % 2) continue;`) is read as guarding the statements after it: they are its `else` "
       "branch.",
       "The `if` must have no `else` and its branch no other `continue`, `break` or `return`; "
       "a `continue` elsewhere, and in `while` loops, is still refused "
       "([UnstructuredControlFlow](#UnstructuredControlFlow)).")  # fmt: skip

# ----------------------------------------------------------------------------------- not modeled

_entry("NonAffineSubscript", MISSED, REGION, NOT_MODELED,
       "An array subscript is not affine, e.g. `A[i*j]` or `A[i*i]`: it multiplies two variables, "
       "divides by a variable, or uses a floating-point value.",
       "Rewrite the index as loop counters and sizes times constants (`A[i*n + j]` with `n` a size "
       "is fine: hexplore treats it as `A[i][j]`).")  # fmt: skip
_entry("IndirectAccess", MISSED, REGION, NOT_MODELED,
       "A subscript reads another array, e.g. `hist[idx[i]]` (a gather/scatter): which element is "
       "touched is only known at run time, so dependences cannot be computed.",
       "Such loops need atomics or a different algorithm (sorting, privatization) to run in "
       "parallel.")  # fmt: skip
_entry("NonAffineLoopBound", MISSED, REGION, NOT_MODELED,
       "A loop's start or condition is not affine (`i < n*m`, `i < len[k]`, `i*i < n`) or uses a "
       "variable changed inside the nest.",
       "Compute the bound into a variable before the loops if it is invariant.")  # fmt: skip
_entry("NonAffineCondition", MISSED, REGION, NOT_MODELED,
       "An `if` condition inside the nest is not affine (`if (A[i] > 0)`, `if (i % k == 0)` with a "
       "variable `k`), and its branches hold more than assignments (a loop, a declaration), or a "
       "branch assigns what the condition reads before its last assignment "
       "(`if (a[i] > m) { m = a[i]; k = i; }`: the second test would see the new `m`).",
       "Branches that only assign are modeled ([GuardedAssignment](#GuardedAssignment)); for the "
       "others, compute with a select (`x = c ? a : b`) instead of branching around statements.")  # fmt: skip
_entry("GuardedAssignment", ANALYSIS, ("scop-detect",), NOT_MODELED,
       "An `if` whose condition reads data (`if (a[i] > m) m = a[i];`, `if (x[i] < 0) x[i] = 0;`, "
       "`if (a[i] > t) c++;`) and whose branches only assign.",
       "Each assignment is modeled as one that runs in every iteration and keeps the old value "
       "where the condition fails (`x = cond ? value : x`; `c += cond ? 1 : 0`), so the loops "
       "around stay parallel where they were, a count is a `+` reduction and a running maximum a "
       "`max` one. Only the chosen side of `?:` is evaluated, so nothing runs that your code did "
       "not (no division by a zero the condition excluded).")  # fmt: skip
_entry("NonCanonicalLoop", MISSED, REGION, NOT_MODELED,
       "The `for` loop is not of the form `for (i = start; i < bound; i += constant)`: the counter "
       "is changed in the body, the condition does not bound the counter in its direction of "
       "travel, or the step is not a constant.")  # fmt: skip
_entry("ImpureCall", MISSED, REGION, NOT_MODELED,
       "A call to a function that may have side effects (`printf`, `malloc`, your own functions) "
       "is inside the loop nest.",
       "Only pure math functions (`sqrt`, `exp`, `fmax`, …) are allowed, and your own helpers "
       "where hexplore inlines them: those of numbers whose body is `return e;` or `if (c) return "
       "a;` statements and a last `return`, and `void` ones that update arrays "
       "([InlinedCall](#InlinedCall)). A call of a function with a prototype whose arguments are "
       "numbers, arrays, addresses in arrays at affine subscripts (`a + i`, `&a[i]`) or of local "
       "numbers (`&x`) is modeled as an opaque call ([OpaqueCall](#OpaqueCall)), `printf` too; "
       "this remark is for the rest: undeclared functions, a prototype that takes or returns "
       "something else (`FILE *`, a struct, none: `f()`), an argument such as `a + k[i]`, "
       "`&i` of a loop counter or a pointer past a `...` (`%s`), or a nest that also uses a global "
       "variable it does not pass to the call. Move I/O out of the nest, or inline your function.")  # fmt: skip
_entry("StructField", MISSED, REGION, NOT_MODELED,
       "The nest reads or writes a struct field hexplore does not read as an array: a field of "
       "an array (`p->x[i]`) or pointer (`g->data[i]`) type, fields of different types of one "
       "array of structs, a struct passed by value or local, or an array of structs also used "
       "whole (`f(bodies)`); the message names the field.",
       "The number fields of an array-of-structs parameter used as `p[i].f` are modeled "
       "([FieldsAsArrays](#FieldsAsArrays)). For a pointer field, pass it to a function that "
       "takes it as a parameter (`double *data`) and loop there.")  # fmt: skip
_entry("SideEffect", MISSED, REGION, NOT_MODELED,
       "An expression has a side effect hexplore cannot model: an assignment or `++` inside an "
       "expression (`a[i] = (b[i] = 2) + 1;`, `if ((k = i) > 2)`).",
       "Write each assignment as its own statement.")  # fmt: skip
_entry("PointerArithmetic", MISSED, REGION, NOT_MODELED,
       "The nest uses pointer arithmetic or addresses (`*(p + i)`, `&x`, a pointer that is not an "
       "array parameter).",
       "Index arrays with subscripts (`p[i]`) instead.")  # fmt: skip
_entry("PossibleAliasing", MISSED, REGION, NOT_MODELED,
       "An access goes through a local pointer; hexplore cannot tell which array it points into, "
       "so it might overlap any other array.",
       "Index the original array (or parameter) directly.")  # fmt: skip
_entry("UnstructuredControlFlow", MISSED, REGION, NOT_MODELED,
       "`break`, `continue`, `return` or `goto` leaves the nest early, so which iterations run is "
       "not known before the loops start.",
       "Restructure the loop so its bounds say when it ends.")  # fmt: skip
_entry("UnsupportedStatement", MISSED, REGION, NOT_MODELED,
       "A statement kind hexplore does not model appears in the nest (e.g. a `switch`, an "
       "expression statement with no effect, or a loop counter read after its loop).")  # fmt: skip
_entry("UnsupportedExpression", MISSED, REGION, NOT_MODELED,
       "An expression hexplore does not model (struct members, a scalar used as an array, a "
       "subscript count that does not match the array's dimensions).")  # fmt: skip
_entry("ExpressionTooLarge", MISSED, REGION, NOT_MODELED,
       "An expression larger than hexplore reads: more than 10,000 operators and operands, or "
       "nested more than 200 deep, after macro expansion.",
       "Compute it in several statements, with temporaries.")  # fmt: skip
_entry("GlobalScalar", MISSED, REGION, NOT_MODELED,
       "The nest writes a global scalar variable; hexplore models the globals a function only "
       "reads, and global arrays.",
       "Keep the value in a local variable and store it to the global after the loops, or return "
       "it.")  # fmt: skip
_entry("NegativeDivision", MISSED, ("polyhedral-model",), NOT_MODELED,
       "A `/` or `%` in a subscript or loop bound divides a value that can be negative: C rounds "
       "such a quotient toward zero (-3 / 2 is -1) where the model rounds down (-2).",
       "Make the numerator non-negative over the loops (shift the loop, or add the divisor "
       "first).")  # fmt: skip
_entry("ModuloOutOfRange", MISSED, ("polyhedral-model",), NOT_MODELED,
       "A subscript `x % n` by a size is modeled only where `x` stays within a few multiples of "
       "`n` (as in `(i + 1) % n`), which hexplore cannot show here.",
       "Bound `x` by the loops (e.g. `0 <= i < n`) so that the wrap-around is at most a few "
       "periods.")  # fmt: skip
_entry("NonAsciiName", MISSED, ("polyhedral-model",), NOT_MODELED,
       "The loop nest uses a name with letters outside ASCII (`café`), which the polyhedral "
       "library cannot read, so it is not modeled.",
       "Rename the variable with letters a-z, A-Z, digits and `_`.")  # fmt: skip
_entry("PolyhedralLibraryError", MISSED, ("polyhedral-model",), NOT_MODELED,
       "The polyhedral library (isl) failed on this loop nest for a reason other than its budget; "
       "the message gives isl's words.",
       "A limitation of hexplore, not an error in your code: please report it with the loop nest.")  # fmt: skip
_entry("AnalysisBudgetExceeded", MISSED, ("polyhedral-model",), NOT_MODELED,
       "The polyhedral library gave up: the nest has too many parameters, too deep a nest or too "
       "large coefficients for its operation budget.",
       "Splitting the nest, or fixing sizes with `-D`, usually helps; the budget is the "
       "`maxIslOperations` setting.")  # fmt: skip

# -------------------------------------------------------------------------------- modeled nests

_entry("ScopDetected", ANALYSIS, ("scop-detect",), FACTS,
       "The loop nest was modeled: it reports how many statements and loops it has and which "
       "variables act as sizes (parameters).",
       "Hover a loop header to see its iteration domain.")  # fmt: skip
_entry("ParallelLoop", ANALYSIS, ("dependences",), FACTS,
       "No iteration of this loop depends on another one (within the same iteration of the "
       "enclosing loops): its iterations can run in any order, e.g. on GPU threads.")  # fmt: skip
_entry("LoopCarriedDependence", ANALYSIS, ("dependences",), FACTS,
       "One iteration of this loop uses a value another iteration produced (or overwrites one it "
       "still needs), so the loop is not parallel as written.",
       "The message names the dependence kind (flow: read after write; anti: write after read; "
       "output: write after write), the statements and a distance vector, one entry per enclosing "
       "loop: `(0, 1)` means \"the next iteration of the inner loop\". The related locations point "
       "at the source and sink statements. A different loop order, or a different algorithm, may "
       "expose parallelism.")  # fmt: skip
_entry("ReductionLoop", ANALYSIS, ("dependences",), FACTS,
       "The loop carries only the dependences of a reduction (`s += x[i]`): it can run in parallel "
       "as a reduction (partial sums combined at the end).",
       "Floating-point results may differ in the last bits because the additions happen in "
       "another order.")  # fmt: skip
_entry("Reduction", ANALYSIS, ("dependences",), FACTS,
       "The statement accumulates into the same element with an associative operator (`+`, `*`, "
       "`max`, `min`) over the named loops.")  # fmt: skip
_entry("NoAliasAssumption", ANALYSIS, ("scop-detect",), FACTS,
       "hexplore assumes the pointer parameters it names point to separate memory.",
       "If they may overlap, the analysis is wrong for that call. Mark the pointers `restrict` to "
       "state the assumption in the code (and let C compilers use it too).")  # fmt: skip
_entry("OpaqueCall", ANALYSIS, ("scop-detect",), FACTS,
       "A call of a function whose body hexplore does not see (declared only, defined in another "
       "file, or marked `__attribute__((noinline))`), as a statement (`log_event(a, i);`) or in "
       "an expression (`y[i] = lookup(t, i);`), is kept as it is: it may read and write all of "
       "each array (or row `A[i]`) passed to it, also through an address in it (`a + i`, "
       "`&a[i]`, `(void *)a`), only read where the parameter points to `const`; it may read and "
       "write a local number whose address it gets (`&x`); and it reads the numbers passed to it, "
       "past a variadic function's `...` too (`printf(\"%f\\n\", a[i])`).",
       "Its statement runs in the original order relative to every statement that touches those arrays, "
       "usually keeping the loop around it sequential. Unless the function is declared "
       "`__attribute__((pure))` or `((const))`, it may also write global variables and do I/O: "
       "such calls keep their order among themselves. A nest that uses a global variable (not "
       "`const`) is modeled only if it passes it to every such call, as TSVC's loops pass their "
       "arrays to `dummy` ([ImpureCall](#ImpureCall)). The generated C "
       "and LLVM code call it with the same arguments; the loop nest stays on the CPU "
       "([HostCall](#HostCall)).")  # fmt: skip
_entry("Delinearized", ANALYSIS, ("scop-detect",), FACTS,
       "A one-dimensional array indexed like `A[i*n + j]` is treated as a two-dimensional "
       "`A[i][j]` with rows of `n` elements, assuming every inner subscript stays within its row "
       "(`0 <= j < n`).")  # fmt: skip

# ---------------------------------------------------------------------------------------- GPU

_entry("Offloaded", PASSED, ("gpu-mapping",), GPU,
       "The loop nest (or part of it) becomes a GPU kernel: its parallel loops are tiled, tiles go "
       "to thread blocks and the points of a tile to threads.",
       "The innermost loop goes to `threadIdx.x`, so that neighbouring threads touch neighbouring "
       "elements. The message lists the statements, tile and block sizes, and which arrays are "
       "copied to shared memory (reused within a tile, or accessed across rows) or kept in "
       "registers (each element used by one thread only, several times).")  # fmt: skip
_entry("SequentialKernel", MISSED, ("gpu-mapping",), GPU,
       "No loop around these statements can run in parallel, so they run on a single GPU thread, "
       "which keeps the data on the GPU between the kernels before and after.",
       "Consider restructuring the loop if this is a hot spot.")  # fmt: skip
_entry("ReductionParallelized", PASSED, ("gpu-mapping",), GPU,
       "The loop only accumulates into one element with `+=` (a reduction), and no other loop "
       "around it is parallel: hexplore runs it in parallel anyway, with atomic additions.",
       "Floating-point sums may then differ from the sequential order in the last bits.")  # fmt: skip
_entry("KeptOnCpu", MISSED, ("profitability",), GPU,
       "At the sizes known when compiling, the loop nest stays on the CPU: it executes fewer "
       "dynamic instructions than the offload threshold (about 2.6 million), or its GPU code "
       "would take longer than one CPU core by the GPU cost model.",
       "The message gives the numbers: how many kernels the GPU code launches per call (one per "
       "iteration of the loops around them), what runs on one GPU thread, the bytes copied, and "
       "both estimated times (`hexplore analyze --gpu --param NAME=VALUE` shows the whole cost "
       "report). A loop that must stay sequential around a small parallel one launches a kernel "
       "per iteration; a longer parallel loop, or making the outer loop parallel, pays. "
       "`hexplore compile --always-offload` generates GPU code anyway.")  # fmt: skip
_entry("HostCall", MISSED, ("profitability",), GPU,
       "The loop nest calls a function of your program ([OpaqueCall](#OpaqueCall)); GPU code "
       "cannot call it, so the nest stays on the CPU, even with `--always-offload`.")  # fmt: skip
_entry("TooLittleWork", MISSED, ("profitability",), GPU,
       "A single loop with a short body is not worth a GPU kernel whatever its trip count.")  # fmt: skip
_entry("OffloadProfitable", PASSED, ("profitability",), GPU,
       "At the sizes known when compiling, the loop nest does enough work to pay for a GPU "
       "kernel, and the GPU cost model estimates its GPU code faster than one CPU core (both "
       "times are in the message).")  # fmt: skip
_entry("OffloadedByDirective", PASSED, ("profitability",), GPU,
       "A `#pragma hexplore gpu` line above the loop nest offloads it, whatever the profitability "
       "model says; its `block(x, y)` and `tile(...)` sizes, where given, apply to every kernel of "
       "the nest, and the CUDA host code checks nothing at run time.",
       "Remove the pragma line to let the profitability model decide again (the message says what "
       "it would decide).")  # fmt: skip
_entry("KeptOnCpuByDirective", MISSED, ("profitability",), GPU,
       "A `#pragma hexplore cpu` line above the loop nest keeps it on the CPU, whatever the "
       "profitability model and `--always-offload` say; `hexplore run --device opencl|cuda` runs "
       "the function on the CPU.")  # fmt: skip
_entry("DirectiveRefused", MISSED, ("profitability",), GPU,
       "A `#pragma hexplore gpu` line asks for something the GPU mapping cannot do for this loop "
       "nest: GPU code cannot call a function of your program, a block has at most 1024 threads, "
       "and a nest none of whose loops can run in parallel gives threads nothing to share. The "
       "directive is ignored and the profitability model decides.")  # fmt: skip
_entry("RuntimeOffloadCheck", ANALYSIS, ("profitability",), GPU,
       "The amount of work depends on sizes known only when the program runs.",
       "The generated host code computes the estimate shown in the message first, and the GPU "
       "cost model's estimated GPU and CPU times, and runs the original loops on the CPU when the "
       "work is below the threshold or the GPU would be slower.")  # fmt: skip
_entry("HostFunctionCall", PASSED, ("codegen-cuda",), GPU,
       "The function is more than this loop nest, so the nest's CUDA host code is a function of "
       "its own (`<function>_scop<k>`), and `<stem>_host.c`, the source file with each offloaded "
       "nest replaced by a call of its host function, keeps the rest of the function as written.",
       "Build `<stem>_host.c` with the C compiler in place of the source file, the `.cu` files with "
       "nvcc, and link them. A function whose body is one loop nest is its host function itself.")  # fmt: skip
_entry("KeptOnCpuForCaller", MISSED, ("codegen-cuda",), GPU,
       "The function is more than this loop nest, and its nest cannot be a host function of its own "
       "called from the C: the code around it reads a scalar, a local array or a loop counter the "
       "nest sets (a host function hands back only the arrays it writes), or the nest is in another "
       "file, or one of its sizes is not a plain variable. It stays on the CPU as written.",
       "The message names the value and the range points at the code that reads it: keep such a "
       "value in an array the function receives, or declare it inside the loop nest.")  # fmt: skip

# ---------------------------------------------------------------------------------------- CPU

_entry("CpuCode", PASSED, ("c-codegen",), CPU,
       "`hexplore compile --target c` replaced this loop nest by tiled C; with `--openmp` the "
       "message says how many loops run in parallel (`#pragma omp parallel for`).")  # fmt: skip
_entry("CpuCodeBudgetExceeded", MISSED, ("c-codegen",), CPU,
       "`hexplore compile --target c` gave up on this loop nest: the polyhedral library exceeded "
       "its operation budget while tiling or writing out its loops, so the nest stays "
       "as written in the output (still correct, not tiled).",
       "Large nests with many statements, divisions or parameters do this. Fixing sizes with `-D`, "
       "or splitting the nest into several loops, usually helps.")  # fmt: skip
_entry("ScheduleBudgetExceeded", MISSED, ("schedule", "c-codegen"), CPU,
       "hexplore gave up looking for a better loop order for this loop nest: the polyhedral "
       "library exceeded its operation budget in the scheduler, so the generated code runs the "
       "loops in their original order (correct, but neither tiled nor parallel).",
       "Large nests with many statements, divisions or parameters do this. Fixing sizes with `-D`, "
       "or splitting the nest into several loops, usually helps.")  # fmt: skip
_entry("TilingNotFaster", MISSED, ("cpu-run",), CPU,
       "On this machine, at these sizes, the tiled loops were not the fastest of the variants "
       "hexplore timed, so it runs the one the message names (untiled, distributed, or the loops "
       "as written).",
       "The message lists each variant's time. Small sizes often make tiling not worth it.")  # fmt: skip
_entry("ParallelNotFaster", MISSED, ("cpu-run",), CPU,
       "The parallel loops were slower on several threads than on one: each runs too briefly to "
       "pay for waking the other threads, so hexplore runs them on one.")  # fmt: skip
_entry("RaceStopped", MISSED, ("cpu-run",), CPU,
       "The race of schedule variants stopped at its time budget (a third of the run's time limit, "
       "at most a minute) before trying them all: hexplore runs the fastest of those it tried, and "
       "the message says how many that was, of how many.",
       "Each variant is built and run once, the likeliest winners first; at large sizes each run "
       "takes seconds. A longer `--timeout` gives the race more time; the tuning cache keeps its "
       "choice for the next run.")  # fmt: skip
_entry("TunedVariant", PASSED, ("cpu-run",), CPU,
       "The variant that runs comes from the tuning cache: an earlier run of this code, at these "
       "sizes, on this machine, raced the variants and found it fastest, so this run skips the "
       "race. It is still checked against the original.",
       "The cache is per user (`$XDG_CACHE_HOME/hexplore/tuning`); a change to the file, the sizes, "
       "the machine or hexplore misses it. `HEXPLORE_TUNING=off` turns it off.")  # fmt: skip
_entry("VectorLoads", PASSED, ("codegen-opencl",), GPU,
       "With a vector width (`hexplore tune` tries 1, 2 and 4), each OpenCL thread runs a row of "
       "neighbouring iterations of the innermost parallel loop, and reads and writes them with "
       "vector loads and stores (`vload4`/`vstore4`): the message names the loop and the "
       "contiguous accesses.",
       "A row's last iterations that do not fill a vector run one by one, so any size is right. "
       "The width is PPOpenCL's per-platform choice, kept only where `hexplore tune` measured it "
       "faster: on PoCL, which already vectorizes across neighbouring threads, rows per thread were "
       "slower for gemm, 2mm, syrk and jacobi-2d (benchmarks/results/tune-vector-2026-11-26.md).")  # fmt: skip
_entry("NoVectorLoads", MISSED, ("codegen-opencl",), GPU,
       "A vector width was asked for, but this kernel's rows of iterations run one by one: the "
       "message says why (an access that is not contiguous along the row, such as `A[j][k]` with "
       "`j` the row's loop; a loop bound or condition that changes along the row; arithmetic other "
       "than `+ - * /` on `double` or `float`).",
       "Accesses whose last subscript is the innermost parallel loop's counter are contiguous; "
       "reading a transposed copy of the array makes the others so.")  # fmt: skip
_entry("TransposedLayout", PASSED, ("codegen-opencl",), GPU,
       "With the transposed layout (`hexplore tune` tries it where it applies), a kernel whose "
       "neighbouring work-items read an array with a stride, such as `A[j][k]` with `j` the "
       "innermost parallel loop, reads a transposed copy instead (`transposed_A[k][j]`), where they "
       "are neighbours: the message names the accesses and the strides before and after.",
       "The copy is made once, on the device, by a small kernel launched before the others; only "
       "for an array no statement of the loop nest writes, so the copy stays equal to it. The "
       "layout is PPOpenCL's per-platform choice, kept only where `hexplore tune` measured it faster.")  # fmt: skip
_entry("NoTransposedLayout", MISSED, ("codegen-opencl",), GPU,
       "The transposed layout was asked for, but no read is transposed: the message says why (no "
       "kernel reads a 2-D array with a stride between neighbouring work-items, or the loop nest "
       "writes the array, so a copy made before the kernels would go stale).",
       "Reads of an array a kernel copies into shared memory or registers are not transposed: the "
       "copy into them already reads the array tile by tile.")  # fmt: skip
_entry("TunedConfiguration", PASSED, ("tune",), CPU,
       "`compile` used the configuration `hexplore tune` found fastest for this function (tile and "
       "block sizes, shared and register promotion, or the C target's tile sizes): the message "
       "says which, how much faster than the default it was, and on which device.",
       "`hexplore tune FILE --function F --target opencl|cpu` searches and records it (per user, "
       "`$XDG_CACHE_HOME/hexplore/tuning`); an edit of the file misses it, and `--tile-size`, "
       "`--sizes` or `--no-shared-memory` on the command line take precedence.")  # fmt: skip

# ------------------------------------------------------------------------------ CUDA input

CK = ("cuda-kernel",)
_entry("CudaKernelModeled", ANALYSIS, CK, CUDA_INPUT,
       "hexplore modeled this `__global__` kernel as its statements run by every thread of every "
       "block (block ids and thread ids as loop counters, the block size from its launches), and "
       "checked it for data races, barriers and memory access patterns; the message says what it "
       "found.",
       "The checks hold for every grid size and every value of the kernel's size parameters, for "
       "the block size the message names.")  # fmt: skip
_entry("CudaKernelNotModeled", MISSED, CK, CUDA_INPUT,
       "The kernel is not modeled, so it is not checked: the message gives the first reason (the "
       "other remarks on the kernel give each one with its range).",
       "The same rules as for C loop nests apply to the kernel's body: subscripts and conditions "
       "affine in the thread and block ids, the loop counters and the sizes. A subscript that is "
       "data (`hist[pix[i]]`) is not modeled.")  # fmt: skip
_entry("AssumedBlockSize", ANALYSIS, CK, CUDA_INPUT,
       "The block size the kernel was checked for is not the one of all its launches: no launch in "
       "this file gives it as constants (hexplore takes 256, 16 x 16 or 8 x 8 x 4 threads by the "
       "thread ids it uses), or the launches use several.",
       "Launch the kernel in the same file with a constant block size (`kernel<<<grid, 256>>>` or "
       "`dim3 block(16, 16)`) to check the size you use.")  # fmt: skip
_entry("UnrolledBlockLoop", ANALYSIS, CK, CUDA_INPUT,
       "A loop whose counter halves or doubles (`s >>= 1`, `s *= 2`) from a value the block size "
       "fixes is read as one copy of its body per value, as in a tree reduction.")  # fmt: skip
_entry("GridStrideLoop", ANALYSIS, CK, CUDA_INPUT,
       "A grid-stride loop (`for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += "
       "blockDim.x * gridDim.x)`) over a grid known only at run time gives each `i` below `n` to "
       "one thread, once, whatever the grid: it is checked and run as one `i` per thread over "
       "the blocks that cover `n`. A race found between two values of `i` happens on a grid that "
       "large; on a smaller one a thread may run both in turn.",
       "Applies where, per axis, one such loop reads the thread's index (it may start past it, "
       "`K + idx`, and sit in sequential loops or in a grid-stride loop along another axis), its "
       "start and bound are the same for every thread, every store and call is inside it, and "
       "there is no `__syncthreads()` or `__shared__` array; else the loop is not modeled and the "
       "remark says which of these fails (launch the kernel with one constant grid in this file "
       "to check it for that grid).")  # fmt: skip
_entry("DelinearizedRows", ANALYSIS, CK, CUDA_INPUT,
       "A flat pointer indexed as `row * 80 + col` (or `row * n + col` where one access names a "
       "constant row, `(0) * (n) + col`) everywhere in the kernel is read as rows of 80 (or `n`) "
       "elements, assuming each inner subscript stays within its row (as `Delinearized` does for "
       "rows of `n`): a column that ran past its row would touch the next row's elements.")  # fmt: skip
_entry("DataRace", MISSED, CK, CUDA_INPUT,
       "Two threads access the same element, at least one writes, and nothing orders them: two "
       "threads of one block with no `__syncthreads()` between the accesses, or threads of two "
       "blocks (never ordered within a launch). The message gives one pair of threads and sizes "
       "where it happens.",
       "Separate the write and the other access by a `__syncthreads()` that every thread of the "
       "block reaches, give each thread its own element, or make both updates atomic "
       "(`atomicAdd`). Two atomic updates of one element do not race.")  # fmt: skip
_entry("BarrierDivergence", MISSED, CK, CUDA_INPUT,
       "Some threads of a block reach this `__syncthreads()` and others do not (it is under a "
       "condition or in a loop that depends on the thread id): CUDA requires all or none.",
       "Move the barrier out of the condition: `if (tid < s) buf[tid] += buf[tid + s]; "
       "__syncthreads();`.")  # fmt: skip
_entry("RedundantBarrier", MISSED, CK, CUDA_INPUT,
       "Removing this `__syncthreads()` would create no data race: the accesses before and after "
       "it that two threads share are only read, or each thread uses its own elements.")  # fmt: skip
_entry("UncoalescedAccess", MISSED, CK, CUDA_INPUT,
       "Adjacent threads of a warp access elements far apart in global memory, so one access of "
       "the warp moves many 32-byte segments and uses a small share of their bytes (the message "
       "gives the distance, the segments and the share).",
       "Let `threadIdx.x` index the last (contiguous) subscript, or load a tile into `__shared__` "
       "memory with coalesced reads and use it from there.")  # fmt: skip
_entry("SharedBankConflict", MISSED, CK, CUDA_INPUT,
       "Threads of a warp access different 4-byte words of the same shared-memory bank (of 32), so "
       "the access is served in as many steps as the message says.",
       "Pad the shared array's last dimension by one (`float tile[32][33]`), so that a column "
       "falls in 32 different banks.")  # fmt: skip

# ---------------------------------------------------------------------------------- derivatives

_entry("Activity", ANALYSIS, ("ad",), AD,
       "Which variables carry a derivative from the `--wrt` inputs to the outputs (active), and "
       "which floating-point variables do not (inactive: no derivative code for them).")  # fmt: skip
_entry("NonDifferentiable", ANALYSIS, ("ad",), AD,
       "An operation on the path from `--wrt` to the outputs has no useful derivative (an integer "
       "operator, a cast that drops the fraction, a call hexplore cannot see into): its derivative "
       "is taken as zero.")  # fmt: skip
_entry("Recomputed", ANALYSIS, ("ad",), AD,
       "The reverse sweep recomputes this value from its inputs instead of storing it: cheaper "
       "than a tape (no memory), and its inputs are not overwritten.")  # fmt: skip
_entry("Taped", ANALYSIS, ("ad",), AD,
       "This value is overwritten before the reverse sweep needs it, so the forward sweep keeps "
       "one copy per iteration in a tape array (the message names it and its size).")  # fmt: skip
_entry("AdjointReduction", ANALYSIS, ("ad",), AD,
       "In the adjoint of this statement, several iterations of a parallel loop add into the same "
       "derivative element: a reduction (atomic additions on a GPU).")  # fmt: skip
_entry("AdjointNoAtomics", ANALYSIS, ("ad",), AD,
       "In the adjoint of this statement, each derivative element is updated by one iteration of "
       "the parallel loops, so a plain `+=` suffices (no atomics).")  # fmt: skip
_entry("DerivativeIsScop", PASSED, ("ad",), AD,
       "The derivative function is one modeled loop nest (SCoP) again: it goes through scheduling, "
       "GPU mapping and code generation like any loop nest.")  # fmt: skip
_entry("DerivativeNotOneScop", MISSED, ("ad",), AD,
       "The derivative function is not one modeled loop nest; the message says how many and why, "
       "so it is not mapped as a whole.")  # fmt: skip
_entry("DerivativeNotAnalyzed", MISSED, ("ad",), AD,
       "hexplore could not parse the derivative function it generated (a bug: please report "
       "it).")  # fmt: skip
_entry("NotInReverseSweep", MISSED, ("ad",), AD,
       "Reverse mode found no statement of the polyhedral model for this assignment to an active "
       "variable, so it cannot write its adjoint; the function is not differentiated in reverse "
       "mode rather than given a gradient that silently misses this assignment.",
       "A limitation of hexplore (please report it with the function); `--mode forward` "
       "differentiates it.")  # fmt: skip

REMARK_NAMES: dict[str, RemarkName] = {e.name: e for e in _ENTRIES}
assert len(REMARK_NAMES) == len(_ENTRIES), "a remark name is registered twice"

# ------------------------------------------------------------------------------------ REMARKS.md

_INTRO = """\
# hexplore remarks

<!-- Generated by `python -m core_compiler.remark_names --markdown > lsp/REMARKS.md`:
     edit core_compiler/remark_names.py, not this file. -->

Every diagnostic hexplore shows has a `code`: the stable name of a remark. This page explains each
one for a C programmer: what it means, and what to change in the code if you want a different
outcome. Editors link each diagnostic to its section here (`REMARKS.md#Name`).

Severity in the editor: **Error** for syntax errors; **Warning** for a loop nest hexplore could not
model or offload (*missed*); **Information** for something hexplore did (*passed*); **Hint** for
facts about your loops (parallelism, dependences, assumptions). Each section below says the
remark's kind and the passes that emit it.

A *modeled loop nest* (a SCoP, "static control part") is a region whose loops have bounds and
array subscripts that are affine — sums of loop counters and size parameters times constants —
and whose statements are assignments. Only modeled nests can be analysed for dependences and
mapped to a GPU.
"""


def _paragraph(text: str, width: int = 100) -> str:
    """`text` filled to `width` columns, never breaking a `code span` (a line that starts with
    ``>`` or ``#`` inside one would not be code any more)."""
    words: list[str] = []
    for w in text.split(" "):
        if words and words[-1].count("`") % 2:
            words[-1] += " " + w
        else:
            words.append(w)
    lines = [""]
    for w in words:
        if lines[-1] and len(lines[-1]) + 1 + len(w) > width:
            lines.append("")
        lines[-1] += (" " if lines[-1] else "") + w
    return "\n".join(lines)


def markdown() -> str:
    """`lsp/REMARKS.md`: one section per heading of `SECTIONS`, one anchored entry per name."""
    parts = [_INTRO]
    for section in SECTIONS:
        parts.append(f"## {section}\n")
        for e in (e for e in _ENTRIES if e.section == section):
            passes = ", ".join(f"`{p}`" for p in e.passes)
            text = f"{e.doc} {e.more}" if e.more else e.doc
            parts.append(
                f'<a id="{e.name}"></a>\n### {e.name}\n\n*{e.kind.value}* · {passes}\n\n{_paragraph(text)}\n'
            )
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    if argv != ["--markdown"]:
        print(
            "usage: python -m core_compiler.remark_names --markdown > lsp/REMARKS.md",
            file=sys.stderr,
        )
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
