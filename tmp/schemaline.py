import os, glob, json, re
root='/work/wt-docs'
def rel(f, kind):
    return os.path.relpath(os.path.join(root,'docs/schemas',kind+'.schema.json'), os.path.dirname(f))
files=[]
for wf in glob.glob(root+'/statemachines/*/'):
    for pat,kind in [('workflow.yaml','workflow'),('offline-model.yaml','offline-model'),('evals/*.yaml','eval-case'),('guards/*.yaml','guard-rules'),('statechart.yaml','statechart')]:
        for f in glob.glob(wf+pat):
            files.append((f,kind))
for f,kind in files:
    s=open(f).read()
    line='# yaml-language-server: $schema='+rel(f,kind)
    if s.startswith('# yaml-language-server'): s=s.split('\n',1)[1]
    open(f,'w').write(line+'\n'+s)
for f in glob.glob(root+'/statemachines/*/agents/*.json'):
    d=json.load(open(f))
    d.pop('$schema',None)
    out={'$schema':rel(f,'agent-config'),**d}
    txt=open(f).read()
    # keep the file's formatting: insert the key after the opening brace
    assert txt.lstrip().startswith('{')
    i=txt.index('{')
    nl='\n' if txt[i+1]=='\n' else ''
    indent=re.match(r'\{\n(\s*)', txt[i:]).group(1) if nl else ''
    txt=txt[:i+1]+nl+indent+'"$schema": '+json.dumps(out['$schema'])+','+('' if nl else ' ')+txt[i+1:]
    open(f,'w').write(txt)
print(len(files))
