; Swift symbols and imports. One node type, class_declaration, declares classes,
; actors, structs, enums and extensions; `declaration_kind` tells them apart. An
; extension is an @scope: its members are named after the extended type.

(class_declaration
  declaration_kind: ["class" "actor"]
  name: (type_identifier) @name.definition.class) @definition.class

(class_declaration
  declaration_kind: "struct"
  name: (type_identifier) @name.definition.struct) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (type_identifier) @name.definition.enum) @definition.enum

(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name.scope)) @scope

(protocol_declaration
  name: (type_identifier) @name.definition.interface) @definition.interface

(function_declaration
  name: (simple_identifier) @name.definition.function) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name.definition.function) @definition.function

(init_declaration
  "init" @name.definition.constructor) @definition.constructor

(typealias_declaration
  name: (type_identifier) @name.definition.type) @definition.type

; import Foundation   /   import os.log
(import_declaration
  (identifier) @import.module) @import

; References.
(call_expression (simple_identifier) @name.reference.call)
(call_expression
  (navigation_expression
    target: (_) @reference.qualifier
    suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))
(user_type (type_identifier) @name.reference.type)
