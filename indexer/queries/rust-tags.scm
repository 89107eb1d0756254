; Rust symbols and imports. An impl block is an @scope: it names the methods inside
; (Stack.push) without being a symbol of its own; the type it is for is the struct/enum.

(function_item
  name: (identifier) @name.definition.function) @definition.function

(function_signature_item
  name: (identifier) @name.definition.function) @definition.function

(struct_item
  name: (type_identifier) @name.definition.struct) @definition.struct

(union_item
  name: (type_identifier) @name.definition.struct) @definition.struct

(enum_item
  name: (type_identifier) @name.definition.enum) @definition.enum

(trait_item
  name: (type_identifier) @name.definition.trait) @definition.trait

(type_item
  name: (type_identifier) @name.definition.type) @definition.type

(mod_item
  name: (identifier) @name.definition.module) @definition.module

(macro_definition
  name: (identifier) @name.definition.macro) @definition.macro

(const_item
  name: (identifier) @name.definition.constant) @definition.constant

(static_item
  name: (identifier) @name.definition.constant) @definition.constant

; `impl Display for Stack<T>` is a trait impl: @scope.trait names the trait, which
; its methods note in their decorators.
(impl_item
  trait: (_)? @scope.trait
  type: [
    (type_identifier) @name.scope
    (generic_type type: (type_identifier) @name.scope)
    (scoped_type_identifier name: (type_identifier) @name.scope)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name.scope))
    (reference_type type: (type_identifier) @name.scope)
    (reference_type type: (generic_type type: (type_identifier) @name.scope))
  ]) @scope

; use a::b::C;   use a::b as c;   use a::b::*;   (the module is the whole path)
(use_declaration
  argument: [
    (identifier)
    (scoped_identifier)
    (crate)
    (self)
    (super)
  ] @import.module) @import

(use_declaration
  argument: (use_as_clause path: (_) @import.module alias: (identifier) @import.alias)) @import

(use_declaration
  argument: (use_wildcard (_) @import.module)) @import

; use a::b::{c, d::e, f as g, self};
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list [(identifier) (scoped_identifier) (self)] @import.name))) @import

(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list (use_as_clause path: (_) @import.name alias: (identifier) @import.alias)))) @import

(extern_crate_declaration
  name: (identifier) @import.module) @import

; mod foo;   declares a module defined in foo.rs or foo/mod.rs: the module is "mod foo"
; (so that the resolver tells it from `use foo`). A `mod foo { ... }` is no import.
(mod_item
  "mod" @import.path
  name: (identifier) @import.path
  !body) @import

; References.
(call_expression function: (identifier) @name.reference.call)
(call_expression
  function: (scoped_identifier
    path: (_) @reference.qualifier
    name: (identifier) @name.reference.call))
(call_expression
  function: (field_expression
    value: (_) @reference.qualifier
    field: (field_identifier) @name.reference.call))
(macro_invocation macro: (identifier) @name.reference.macro)
; Calls inside a macro's arguments (`assert_eq!(parse(x), y)`, `vec![f(1)]`): the
; arguments are a token tree, a call is a name right before a parenthesised one.
(token_tree
  (identifier) @reference.qualifier
  .
  "."
  .
  (identifier) @name.reference.call
  .
  (token_tree) @_arguments
  (#match? @_arguments "^[(]"))
(token_tree
  (identifier) @name.reference.call
  .
  (token_tree) @_arguments
  (#match? @_arguments "^[(]"))
(struct_expression name: (type_identifier) @name.reference.type)
(parameter type: (type_identifier) @name.reference.type)
(reference_type type: (type_identifier) @name.reference.type)
(generic_type type: (type_identifier) @name.reference.type)
(impl_item trait: (type_identifier) @name.reference.type)
