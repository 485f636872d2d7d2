import ts from 'typescript'

/** What a set of entry files can reach at run time. */
export type RuntimeReach = {
  /** Source files of this repository whose code can run (absolute paths). */
  files: Set<string>
  /** Names imported from packages, by module: `viem/actions` → `multicall`, … (`*` for a namespace). */
  packages: Map<string, Set<string>>
}

/** Questions about this repository's import graph, answered from one TypeScript program. */
export type ImportGraph = {
  /**
   * Follows the run-time imports of `entries` the way a bundler does: a named import is followed to
   * the file that declares it (through barrels such as `src/index.ts`), a namespace, default,
   * side-effect or dynamic import to the whole module; type-only imports are skipped. Every file
   * reached counts whole, with all of its own imports.
   */
  runtimeReach: (entries: string[]) => RuntimeReach
  /** The files that declare the named exports of a module (through its re-exports). */
  declaringFiles: (module: string, names: string[]) => Map<string, string>
  /**
   * What one file imports directly, type-only, re-exported and dynamic imports included: local
   * modules as absolute paths, packages by their specifier. Barrels are not followed.
   */
  moduleImports: (file: string) => ModuleImports
}

/** The direct imports of one file. */
export type ModuleImports = { files: string[]; packages: string[] }

/**
 * Builds the import graph of `rootFiles` and everything they import.
 *
 * @param rootFiles - Absolute paths; every file asked about later must be among them or reachable.
 * @returns The graph.
 */
export function importGraph(rootFiles: string[]): ImportGraph {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    resolveJsonModule: true,
    noEmit: true,
    // Nothing here is type-checked: the questions are which file declares a name, answered from this
    // repository's files alone. The standard library's and the packages' declarations (viem's, the MCP
    // SDK's, DOM's) took most of a core for 5 to 17 s per graph and answered none of them.
    noLib: true,
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const cache = ts.createModuleResolutionCache(host.getCurrentDirectory(), (name) => name, options)
  const unresolved = { resolvedModule: undefined }
  // A package import is known by its specifier (`viem/accounts`); only relative ones are followed.
  host.resolveModuleNameLiterals = (literals, containingFile, redirectedReference) =>
    literals.map((literal) =>
      literal.text.startsWith('.')
        ? ts.resolveModuleName(
            literal.text,
            containingFile,
            options,
            host,
            cache,
            redirectedReference,
          )
        : unresolved,
    )
  const program = ts.createProgram(rootFiles, options, host)
  const checker = program.getTypeChecker()
  return {
    runtimeReach: (entries) => runtimeReach(program, checker, entries),
    declaringFiles: (module, names) => declaringFiles(program, checker, module, names),
    moduleImports: (file) => moduleImports(program, file),
  }
}

function runtimeReach(
  program: ts.Program,
  checker: ts.TypeChecker,
  entries: string[],
): RuntimeReach {
  const files = new Set<string>()
  const packages = new Map<string, Set<string>>()
  const queue = [...entries]

  const addFile = (file: string | undefined) => {
    if (!file || file.includes('/node_modules/') || files.has(file)) return
    files.add(file)
    queue.push(file)
  }
  const addPackageName = (module: string, name: string) => {
    const names = packages.get(module) ?? new Set<string>()
    names.add(name)
    packages.set(module, names)
  }
  const moduleFile = (specifier: ts.Expression) =>
    checker.getSymbolAtLocation(specifier)?.valueDeclaration?.getSourceFile().fileName
  /** The file that declares the value an import or export specifier names (through re-exports). */
  const declaringFile = (name: ts.Node) => {
    const symbol = checker.getSymbolAtLocation(name)
    if (!symbol) return undefined
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    if (!(target.flags & ts.SymbolFlags.Value)) return undefined // a type: nothing runs
    return target.declarations?.[0]?.getSourceFile().fileName
  }

  for (const entry of entries) files.add(entry)
  while (queue.length > 0) {
    const source = program.getSourceFile(queue.shift() as string)
    if (!source) continue
    const visit = (node: ts.Node) => {
      if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        const specifier = node.arguments[0].text
        if (specifier.startsWith('.')) addFile(moduleFile(node.arguments[0]))
        else addPackageName(specifier, '*')
      }
      ts.forEachChild(node, visit)
    }
    for (const statement of source.statements) {
      const isImport = ts.isImportDeclaration(statement)
      const isReExport = ts.isExportDeclaration(statement) && statement.moduleSpecifier
      if (!isImport && !isReExport) {
        visit(statement)
        continue
      }
      if (isImport ? statement.importClause?.isTypeOnly : statement.isTypeOnly) continue
      const specifierNode = statement.moduleSpecifier as ts.StringLiteral
      const specifier = specifierNode.text
      const local = specifier.startsWith('.')
      const named = isImport
        ? statement.importClause?.namedBindings &&
          ts.isNamedImports(statement.importClause.namedBindings)
          ? statement.importClause.namedBindings.elements
          : undefined
        : statement.exportClause && ts.isNamedExports(statement.exportClause)
          ? statement.exportClause.elements
          : undefined
      const whole =
        !named ||
        (isImport &&
          (statement.importClause?.name !== undefined ||
            (statement.importClause?.namedBindings !== undefined &&
              ts.isNamespaceImport(statement.importClause.namedBindings))))
      if (whole) {
        if (local) addFile(moduleFile(specifierNode))
        else addPackageName(specifier, '*')
      }
      for (const element of named ?? []) {
        if (element.isTypeOnly) continue
        if (local) addFile(declaringFile(element.name))
        else addPackageName(specifier, (element.propertyName ?? element.name).text)
      }
    }
  }
  return { files, packages }
}

/**
 * Every identifier and string literal in a file's code (comments excluded), with its line.
 *
 * @param file - An absolute path.
 * @returns `[text, line]` pairs.
 */
export function codeTokens(file: string): [string, number][] {
  const source = ts.createSourceFile(
    file,
    ts.sys.readFile(file) ?? '',
    ts.ScriptTarget.ES2022,
    true,
  )
  const tokens: [string, number][] = []
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteralLike(node)) {
      tokens.push([node.text, source.getLineAndCharacterOfPosition(node.getStart()).line + 1])
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return tokens
}

function declaringFiles(
  program: ts.Program,
  checker: ts.TypeChecker,
  module: string,
  names: string[],
): Map<string, string> {
  const source = program.getSourceFile(module)
  const moduleSymbol = source && checker.getSymbolAtLocation(source)
  const result = new Map<string, string>()
  for (const symbol of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) {
    if (!names.includes(symbol.name)) continue
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const file = target.declarations?.[0]?.getSourceFile().fileName
    if (file) result.set(symbol.name, file)
  }
  return result
}

function moduleImports(program: ts.Program, file: string): ModuleImports {
  const source = program.getSourceFile(file)
  if (!source) throw new Error(`${file} is not in the import graph`)
  const files = new Set<string>()
  const packages = new Set<string>()
  const add = (specifier: ts.Node | undefined) => {
    if (!specifier || !ts.isStringLiteralLike(specifier)) return
    if (!specifier.text.startsWith('.')) {
      packages.add(specifier.text)
      return
    }
    const resolved = ts.resolveModuleName(
      specifier.text,
      file,
      program.getCompilerOptions(),
      ts.sys,
    ).resolvedModule
    files.add(resolved?.resolvedFileName ?? specifier.text)
  }
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0])
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return { files: [...files], packages: [...packages] }
}
