; Go symbols and imports. A method is declared outside its type: @receiver names the
; type, so `func (s *Server) Start()` becomes Server.Start.

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name.definition.method) @definition.method

; The specific type patterns come first: for one node the earliest pattern wins.
(type_spec
  name: (type_identifier) @name.definition.struct
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name.definition.interface
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name.definition.type) @definition.type

(type_alias
  name: (type_identifier) @name.definition.type) @definition.type

(method_elem
  name: (field_identifier) @name.definition.method) @definition.method

(const_spec
  name: (identifier) @name.definition.constant) @definition.constant

; import "fmt"   /   import ( alias "net/http" ... ): one record per spec.
(import_spec
  path: (_) @import.module) @import

(import_spec
  name: (package_identifier) @import.alias
  path: (_) @import.module) @import

; References.
(call_expression function: (identifier) @name.reference.call)
(call_expression
  function: (selector_expression
    operand: (_) @reference.qualifier
    field: (field_identifier) @name.reference.call))
(parameter_declaration type: (type_identifier) @name.reference.type)
(pointer_type (type_identifier) @name.reference.type)
(composite_literal type: (type_identifier) @name.reference.type)
(field_declaration type: (type_identifier) @name.reference.type)
(qualified_type
  package: (package_identifier) @reference.qualifier
  name: (type_identifier) @name.reference.type)
