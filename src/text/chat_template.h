/* chat_template.h — the chat template API under its former path: it lives in
 * src/template/chat_template.h. src/engine/chat.c includes it by this name;
 * once that include names template/chat_template.h, this file goes. */
#ifndef WICK_TEXT_CHAT_TEMPLATE_H
#define WICK_TEXT_CHAT_TEMPLATE_H

#include "template/chat_template.h"

#endif
