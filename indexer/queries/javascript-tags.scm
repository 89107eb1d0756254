; JavaScript symbols and imports. typescript-tags.scm inherits these patterns, so they
; must only name node types the TypeScript grammar also has (class names are
; (identifier) here but (type_identifier) there: match them with (_)).

(class_declaration
  name: (_) @name.definition.class) @definition.class

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(generator_function_declaration
  name: (identifier) @name.definition.function) @definition.function

(method_definition
  name: (property_identifier) @name.definition.constructor
  (#eq? @name.definition.constructor "constructor")) @definition.constructor

; Methods come out as "method" because they sit in a class.
(method_definition
  name: (_) @name.definition.function
  (#not-eq? @name.definition.function "constructor")) @definition.function

; const f = () => ...   /   const f = function () { ... }
(variable_declarator
  name: (identifier) @name.definition.function
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; const api = { get() {...} }: the object names the functions in it (api.get), as a
; class does, without being a symbol itself.
(variable_declarator
  name: (identifier) @name.scope
  value: (object)) @scope

; { put: function () {...}, del: (key) => key } in any object literal, module.exports
; = {...} included.
(pair
  key: (property_identifier) @name.definition.function
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Foo.prototype.bar = function () {...}: a method of Foo.
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @receiver
      property: (property_identifier) @_prototype)
    property: (property_identifier) @name.definition.function)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#eq? @_prototype "prototype")) @definition.function

; exports.foo = function () {...}   /   module.exports.foo = ...: a function of the module.
(assignment_expression
  left: (member_expression
    object: [
      (identifier) @_exports
      (member_expression property: (property_identifier) @_exports)
    ]
    property: (property_identifier) @name.definition.function)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#eq? @_exports "exports")) @definition.function

; proto.format = function () {...}: a method of the object it is assigned to.
(assignment_expression
  left: (member_expression
    object: (identifier) @receiver
    property: (property_identifier) @name.definition.function)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#not-eq? @receiver "exports")) @definition.function

; Top-level UPPER_CASE constants, exported or not.
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name.definition.constant) @definition.constant)
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$"))

(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name.definition.constant) @definition.constant))
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$"))

; import d, { a, b as c } from "m"   /   import * as ns from "m"   /   import "m"
(import_statement
  source: (string (string_fragment) @import.module)) @import

(import_statement
  (import_clause (identifier) @import.name)) @import

(import_statement
  (import_clause
    (named_imports (import_specifier name: (_) @import.name)))) @import

(import_statement
  (import_clause
    (named_imports (import_specifier name: (_) @import.name alias: (_) @import.alias)))) @import

; export { a } from "m"   /   export * from "m"
(export_statement
  source: (string (string_fragment) @import.module)) @import

(export_statement
  (export_clause (export_specifier name: (_) @import.name))
  source: (string)) @import

; require("m")   /   import("m")
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.module))
  (#eq? @_require "require")) @import

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @import.module))) @import

; References (shared with TypeScript: only nodes both grammars have).
(call_expression function: (identifier) @name.reference.call)
(call_expression
  function: (member_expression
    object: (_) @reference.qualifier
    property: (property_identifier) @name.reference.call))
(new_expression constructor: (identifier) @name.reference.call)
(new_expression
  constructor: (member_expression
    object: (_) @reference.qualifier
    property: (property_identifier) @name.reference.call))
(arguments (identifier) @name.reference.other)
