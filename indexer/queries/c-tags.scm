; C symbols and includes. cpp-tags.scm inherits these patterns, so they must only name
; node types the C++ grammar also has.

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name.definition.function)
    (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @name.definition.function))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator declarator: (identifier) @name.definition.function)))
  ]) @definition.function

; Prototypes at file level: all a header has to say about its functions.
(translation_unit
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name.definition.function)
      (pointer_declarator
        declarator: (function_declarator declarator: (identifier) @name.definition.function))
    ]) @definition.function)

; Only specifiers with a body define a type; `struct ring *r` merely uses one.
(struct_specifier
  name: (type_identifier) @name.definition.struct
  body: (_)) @definition.struct

(union_specifier
  name: (type_identifier) @name.definition.struct
  body: (_)) @definition.struct

(enum_specifier
  name: (type_identifier) @name.definition.enum
  body: (_)) @definition.enum

; typedef struct { ... } name;
(type_definition
  type: (struct_specifier !name body: (_))
  declarator: (type_identifier) @name.definition.struct) @definition.struct

(type_definition
  type: (enum_specifier !name body: (_))
  declarator: (type_identifier) @name.definition.enum) @definition.enum

; typedef unsigned char byte;   (not `typedef struct x {...} y;`: that is struct x)
(type_definition
  type: (_ !body)
  declarator: (type_identifier) @name.definition.type) @definition.type

(preproc_def
  name: (identifier) @name.definition.macro) @definition.macro

(preproc_function_def
  name: (identifier) @name.definition.macro) @definition.macro

; #include <stdio.h>   /   #include "local.h"
(preproc_include
  path: (_) @import.module) @import

; References (shared with C++).
(call_expression function: (identifier) @name.reference.call)
(call_expression
  function: (field_expression
    argument: (_) @reference.qualifier
    field: (field_identifier) @name.reference.call))
(parameter_declaration type: (type_identifier) @name.reference.type)
(declaration type: (type_identifier) @name.reference.type)
