#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""References that file moves leave behind, as a TAP test, one test per file.

    check-refs.py [SRCROOT]

A path is checked when a comment of a source file (C and C++ sources and
headers, meson.build, scripts) or the text of a doc (README.md, docs/*.md)
names it, and its first component is one of this tree's top-level folders
(lib/, arch/, ...) or a folder beside the file (traces/ in tools/replay/):
such a path must exist, from the root or from the file's own folder. Other
paths (mm/memory.c, asm/pgtable.h) are the kernel's, and so are the few
under KERNEL_PATHS that start like ours, and a folder beside the file named
like one of the kernel's (tests/mm/ and mm/memory.c). A bare file name is
checked only when it is a doc (design.md): pgtable.h may be the kernel's.

A markdown link must reach its file, and its anchor a heading of that file
(as GitHub makes anchors); so must a name.md#anchor in a comment. A numbered
section named in words ("porting.md, section 9", "(section 7)" inside a doc
with numbered headings) must exist, and a link whose text names a section
must point at that section's heading.

The README's Layout, a tree of folders, names folders that exist, and each
folder whose subfolders it lists, it lists them all.
"""
import glob
import os
import re
import sys

TOP = ('lib', 'arch', 'hw', 'host', 'tests', 'bench', 'tools', 'docs', 'scripts',
       'include', 'examples', 'abi', '.ci')

# Kernel paths that begin with one of our top-level folders: the kernel's own
# arch/ and include/ trees, cited as sources.
KERNEL_PATHS = ('arch/x86/', 'arch/arm64/include/', 'arch/arm64/mm/', 'arch/riscv/',
                'arch/loongarch/', 'include/linux/', 'include/asm-generic/',
                'include/uapi/', 'tools/testing/')
KERNEL_TOP = ('mm', 'fs', 'kernel', 'include', 'arch', 'lib', 'tools', 'drivers')

C_EXT = ('.c', '.h', '.cc', '.cpp', '.h.in')
HASH_EXT = ('.py', '.sh')
HASH_NAMES = ('meson.build', 'meson_options.txt')

PATH_RE = re.compile(r'[\w.+*<>{}/-]+')
# A doc by its bare name; a name in capitals (RESULTS.md) stands for one the user picks.
DOC_NAME_RE = re.compile(r'(?<![\w./<>-])([\w-]*[a-z][\w-]*\.md)\b(?![\w/])')
MD_ANCHOR_RE = re.compile(r'([\w./-]*\.md)#([\w-]+)')
LINK_RE = re.compile(r'\[((?:[^\]\[]|\[[^\]]*\])*)\]\(([^)\s]+)\)')
SECTION_OF_RE = re.compile(r'([\w./-]+\.md),? sections? (\d+)')
SECTION_RE = re.compile(r'\bsections? (\d+)')
HEADING_RE = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')


def c_comments(text):
    """@text with everything but its comments blanked, newlines kept."""
    out = []
    i, n = 0, len(text)
    state = 'code'
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if state == 'code':
            if two == '/*':
                state = 'block'
                out.append('  ')
                i += 2
                continue
            if two == '//':
                state = 'line'
                out.append('  ')
                i += 2
                continue
            if c in '"\'':
                state = c
            out.append('\n' if c == '\n' else ' ')
        elif state == 'block':
            if two == '*/':
                state = 'code'
                out.append('  ')
                i += 2
                continue
            out.append(c)
        elif state == 'line':
            if c == '\n':
                state = 'code'
            out.append(c)
        else:  # in a string or character literal
            if c == '\\':
                out.append('  ' if i + 1 < n and text[i + 1] != '\n' else ' \n')
                i += 2
                continue
            if c == state or c == '\n':
                state = 'code'
            out.append('\n' if c == '\n' else ' ')
        i += 1
    return ''.join(out)


def hash_comments(text):
    """@text with all but its '#' comments blanked: a '#' opening a line or after a blank, outside quotes."""
    lines = []
    for line in text.split('\n'):
        quote = None
        start = None
        for i, c in enumerate(line):
            if quote:
                if c == quote:
                    quote = None
            elif c in '"\'':
                quote = c
            elif c == '#' and (i == 0 or line[i - 1] in ' \t'):
                start = i
                break
        lines.append(' ' * len(line) if start is None else ' ' * start + line[start:])
    return '\n'.join(lines)


def markdown_prose(text):
    """@text with fenced code blocks blanked: commands there name the build tree."""
    lines, fence = [], False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fence = not fence
            lines.append('')
            continue
        lines.append('' if fence else line)
    return '\n'.join(lines)


def slug(heading):
    """The anchor GitHub gives a heading."""
    h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading)   # a link's text only
    h = h.strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')


class Doc:
    """A markdown file's anchors and numbered sections."""

    def __init__(self, path):
        self.anchors = set()
        self.sections = {}      # number: anchor
        seen = {}
        with open(path, encoding='utf-8') as f:
            text = markdown_prose(f.read())
        for line in text.split('\n'):
            m = HEADING_RE.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            if s in seen:
                seen[s] += 1
                s = '%s-%d' % (s, seen[s])
            else:
                seen[s] = 0
            self.anchors.add(s)
            num = re.match(r'(\d+)\.\s', m.group(2))
            if num and len(m.group(1)) == 2:
                self.sections[int(num.group(1))] = s


class Checker:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.docs = {}

    def doc(self, path):
        path = os.path.normpath(path)
        if path not in self.docs:
            self.docs[path] = Doc(path) if os.path.isfile(path) else None
        return self.docs[path]

    def exists(self, path):
        if any(c in path for c in '*?'):
            return bool(glob.glob(path))
        return os.path.exists(path)

    def resolve(self, name, folder):
        """The file @name means from @folder: the root's first, then the folder's."""
        for base in (self.root, folder):
            p = os.path.normpath(os.path.join(base, name))
            if self.exists(p):
                return p
        return None

    def check_paths(self, text, folder, problems):
        for lineno, line in enumerate(text.split('\n'), 1):
            for m in PATH_RE.finditer(line):
                tok = m.group(0).strip('*').rstrip('.-')
                if '/' not in tok or tok.startswith('/') or re.search(r'[<>{}]|\.\.\.', tok):
                    continue
                if m.start() > 0 and line[m.start() - 1] in ':@$~\\':
                    continue    # a URL, a variable, a home folder
                rel = tok.startswith('./') or tok.startswith('../')
                if rel:
                    p = os.path.normpath(os.path.join(folder, tok))
                    if os.path.relpath(p, self.root).startswith('..'):
                        continue
                    if not self.exists(p):
                        problems.append('%d: %s does not exist' % (lineno, tok))
                    continue
                first = tok.split('/')[0]
                if tok.startswith(KERNEL_PATHS) or tok + '/' in KERNEL_PATHS:
                    continue
                beside = first not in KERNEL_TOP and os.path.isdir(os.path.join(folder, first))
                if first not in TOP and not beside:
                    continue
                if self.resolve(tok, folder) is None:
                    problems.append('%d: %s does not exist' % (lineno, tok))
            for m in DOC_NAME_RE.finditer(line):
                if not any(os.path.exists(os.path.join(base, m.group(1)))
                           for base in (folder, self.root, os.path.join(self.root, 'docs'))):
                    problems.append('%d: %s does not exist' % (lineno, m.group(1)))

    def check_anchor(self, lineno, target, folder, problems, ref=None):
        """@target is file.md#anchor, #anchor or file.md; @ref is the section the text names."""
        path, _, anchor = target.partition('#')
        if path:
            found = self.resolve(path, folder) if not path.startswith('.') else \
                os.path.normpath(os.path.join(folder, path))
            if not found or not os.path.exists(found):
                problems.append('%d: %s does not exist' % (lineno, path))
                return
        else:
            found = self.current
        if not anchor or not found.endswith('.md'):
            return
        d = self.doc(found)
        if anchor not in d.anchors:
            problems.append('%d: %s: no heading has the anchor #%s' % (lineno, path or 'here', anchor))
        elif ref is not None and d.sections.get(ref) != anchor:
            problems.append('%d: "section %d" links to #%s' % (lineno, ref, anchor))

    def check_sections(self, text, folder, problems):
        """Sections named in words: "file.md, section N", and "section N" in a numbered doc."""
        for lineno, line in enumerate(text.split('\n'), 1):
            named = []
            for m in SECTION_OF_RE.finditer(line):
                path = self.resolve(m.group(1), folder)
                if path is None:
                    continue    # check_paths or the link check names it
                named.append(m.start(2))
                d = self.doc(path)
                if d and int(m.group(2)) not in d.sections:
                    problems.append('%d: %s has no section %s' % (lineno, m.group(1), m.group(2)))
            here = self.doc(self.current) if self.current.endswith('.md') else None
            if not here or not here.sections:
                continue
            for m in SECTION_RE.finditer(line):
                if m.start(1) in named or re.search(r'\]\([^)]*$', line[:m.start()]):
                    continue
                # the section of another doc, named before its link
                if re.search(r'\.md,?\s*$', line[:m.start()]):
                    continue
                if int(m.group(1)) not in here.sections:
                    problems.append('%d: no section %s here' % (lineno, m.group(1)))

    def check_layout(self, raw, problems):
        """The README's tree of folders under "## Layout", both ways."""
        lines = raw.split('\n')
        try:
            start = next(i for i, l in enumerate(lines) if l.strip() == '## Layout')
        except StopIteration:
            problems.append('no "## Layout" section')
            return
        stack, listed = [], {'': set()}
        fence = 0
        for lineno, line in enumerate(lines[start + 1:], start + 2):
            if line.startswith('```'):
                fence += 1
                if fence == 2:
                    break
                continue
            if line.startswith('#'):
                break
            m = re.match(r'( *)([\w.-]+(?:/[\w.-]+)*)/(\s|$)', line)
            if not fence or not m:
                continue
            depth = len(m.group(1)) // 2
            del stack[depth:]
            parent = '/'.join(stack)
            path = '/'.join(stack + [m.group(2)])
            stack.append(m.group(2))
            listed.setdefault(parent, set()).add(path)
            listed.setdefault(path, set())
            if not os.path.isdir(os.path.join(self.root, path)):
                problems.append('%d: the layout names %s/, which does not exist' % (lineno, path))
        for folder, children in listed.items():
            if folder and not children:
                continue
            base = os.path.join(self.root, folder)
            for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
                sub = os.path.join(folder, d) if folder else d
                if d.startswith(('_', 'build')) or (d.startswith('.') and not folder and
                                                     d not in TOP):
                    continue
                if os.path.isdir(os.path.join(base, d)) and sub not in children and \
                        not any(c.startswith(sub + '/') for c in children):
                    problems.append('the layout lists %s/ but not %s/' % (folder or 'the root', sub))

    def check_file(self, path):
        self.current = path
        folder = os.path.dirname(path)
        with open(path, encoding='utf-8', errors='replace') as f:
            raw = f.read()
        problems = []
        name = os.path.basename(path)
        if name.endswith('.md'):
            text = markdown_prose(raw)
            for lineno, line in enumerate(text.split('\n'), 1):
                for m in LINK_RE.finditer(line):
                    target = m.group(2)
                    if re.match(r'[a-z]+:', target):
                        continue
                    sec = re.search(r'\bsection (\d+)', m.group(1))
                    self.check_anchor(lineno, target, folder, problems,
                                      int(sec.group(1)) if sec else None)
            # Link targets were checked above; the prose without them.
            text = LINK_RE.sub(lambda m: '[' + m.group(1) + ']', text)
        elif name.endswith(C_EXT):
            text = c_comments(raw)
        elif name.endswith(HASH_EXT) or name in HASH_NAMES or raw.startswith('#!'):
            text = hash_comments(raw)
        else:
            return None
        self.check_paths(text, folder, problems)
        for lineno, line in enumerate(text.split('\n'), 1):
            for m in MD_ANCHOR_RE.finditer(line):
                if not (m.start() > 0 and line[m.start() - 1] in ':/'):
                    self.check_anchor(lineno, m.group(0), folder, problems)
        self.check_sections(text, folder, problems)
        if os.path.relpath(path, self.root) == 'README.md':
            self.check_layout(raw, problems)
        return problems

    def files(self):
        yield os.path.join(self.root, 'README.md')
        for name in sorted(os.listdir(self.root)):
            if name in HASH_NAMES:
                yield os.path.join(self.root, name)
        for top in TOP:
            for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, top)):
                dirnames.sort()
                for f in sorted(filenames):
                    yield os.path.join(dirpath, f)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    checker = Checker(root)
    results = []
    for path in checker.files():
        if path.endswith('.md') and os.path.relpath(path, checker.root).split(os.sep)[0] not in \
                ('docs', 'README.md'):
            continue
        problems = checker.check_file(path)
        if problems is not None:
            results.append((os.path.relpath(path, checker.root), problems))
    print('1..%d' % len(results))
    failed = 0
    for i, (rel, problems) in enumerate(results, 1):
        print('%s %d - %s' % ('not ok' if problems else 'ok', i, rel))
        for p in problems:
            print('#   %s:%s' % (rel, p))
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
