; PHP symbols and imports. Methods are functions inside a class, interface or trait.
; `__construct` is an ordinary method by syntax and stays one.

(class_declaration
  name: (name) @name.definition.class) @definition.class

(interface_declaration
  name: (name) @name.definition.interface) @definition.interface

(trait_declaration
  name: (name) @name.definition.trait) @definition.trait

(enum_declaration
  name: (name) @name.definition.enum) @definition.enum

(function_definition
  name: (name) @name.definition.function) @definition.function

(method_declaration
  name: (name) @name.definition.function) @definition.function

; `namespace A\B { ... }` encloses its members; `namespace A\B;` covers only its line.
(namespace_definition
  name: (namespace_name) @name.definition.module) @definition.module

(const_declaration
  (const_element (name) @name.definition.constant)) @definition.constant

; use A\B;   use A\B as C, D\E;   use function A\f;   (the module is the whole name)
(namespace_use_declaration
  (namespace_use_clause . [(qualified_name) (name)] @import.module)) @import

; use A\{B, C\D};
(namespace_use_declaration
  (namespace_name) @import.module
  body: (namespace_use_group
    (namespace_use_clause . [(qualified_name) (name)] @import.name))) @import

; require "x.php";   include_once 'y.php';   (literal paths only)
[
  (require_expression [(string) (encapsed_string)] @import.module)
  (require_once_expression [(string) (encapsed_string)] @import.module)
  (include_expression [(string) (encapsed_string)] @import.module)
  (include_once_expression [(string) (encapsed_string)] @import.module)
] @import

; References.
(function_call_expression function: (name) @name.reference.call)
(function_call_expression function: (qualified_name (name) @name.reference.call))
(member_call_expression object: (_) @reference.qualifier name: (name) @name.reference.call)
(scoped_call_expression scope: (_) @reference.qualifier name: (name) @name.reference.call)
(object_creation_expression (name) @name.reference.call)
(base_clause (name) @name.reference.type)
(class_interface_clause (name) @name.reference.type)
(simple_parameter type: (named_type (name) @name.reference.type))
