; C# symbols and using directives. Methods are functions inside a class-like symbol.

(class_declaration
  name: (identifier) @name.definition.class) @definition.class

(record_declaration
  name: (identifier) @name.definition.class) @definition.class

(struct_declaration
  name: (identifier) @name.definition.struct) @definition.struct

(interface_declaration
  name: (identifier) @name.definition.interface) @definition.interface

(enum_declaration
  name: (identifier) @name.definition.enum) @definition.enum

(delegate_declaration
  name: (identifier) @name.definition.type) @definition.type

; A block namespace encloses its members; a file-scoped one (`namespace A.B;`) covers
; only its own line, so it does not prefix the names after it.
(namespace_declaration
  name: (_) @name.definition.module) @definition.module

(file_scoped_namespace_declaration
  name: (_) @name.definition.module) @definition.module

(method_declaration
  name: (identifier) @name.definition.function) @definition.function

(local_function_statement
  name: (identifier) @name.definition.function) @definition.function

(constructor_declaration
  name: (identifier) @name.definition.constructor) @definition.constructor

(field_declaration
  (modifier "const")
  (variable_declaration
    (variable_declarator name: (identifier) @name.definition.constant))) @definition.constant

; using System.Text;   using static System.Math;   using Json = Newtonsoft.Json;
(using_directive
  !name
  [(identifier) (qualified_name)] @import.module) @import

(using_directive
  name: (_)
  .
  [(identifier) (qualified_name)] @import.module) @import

; References.
(invocation_expression function: (identifier) @name.reference.call)
(invocation_expression
  function: (member_access_expression
    expression: (_) @reference.qualifier
    name: (identifier) @name.reference.call))
(object_creation_expression type: (identifier) @name.reference.call)
(base_list (identifier) @name.reference.type)
(parameter type: (identifier) @name.reference.type)
(variable_declaration type: (identifier) @name.reference.type)
